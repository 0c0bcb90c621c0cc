import { layer } from "@effect/vitest"
import { SecurityEvent } from "@portfolio/domain"
import { DateTime, Effect, Option } from "effect"
import { describe, expect, it } from "vitest"
import { AuditPageSize, securityEventsListed } from "../src/AuditCommand.js"
import { FakeAdmin, FakeAdminLive } from "./support/FakeAdminApis.js"
import { controlCharactersIn, portfolio } from "./support/RunCli.js"

const event = (i: number) =>
  new SecurityEvent({
    id: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
    tenantId: null,
    at: DateTime.makeUnsafe(Date.UTC(2026, 10, 1) + i * 1000),
    actorSub: null,
    actorEmail: "nobody@nowhere.example",
    action: "sign_in_failed",
    target: null,
    ip: "203.0.113.7",
    userAgent: "curl/8",
    detail: {}
  })

describe("portfolio audit's output", () => {
  it("says which log is empty: a tenant's, or the one of no tenant", () => {
    expect(securityEventsListed(Option.some("acme"), []).human).toEqual(["No security event in acme."])
    expect(securityEventsListed(Option.none(), []).human).toEqual(["No security event outside the tenants."])
  })

  it("writes one line per entry, and says so when the page is full rather than leave older entries unmentioned", () => {
    const few = securityEventsListed(Option.none(), [event(1)]).human
    expect(few).toEqual(["2026-11-01T00:00:01.000Z  sign_in_failed         nobody@nowhere.example  from 203.0.113.7"])
    const full = securityEventsListed(Option.some("acme"), Array.from({ length: AuditPageSize }, (_, i) => event(i))).human
    expect(full).toHaveLength(AuditPageSize + 1)
    expect(full.at(-1)).toBe("(the newest 1,000 only: older entries are not shown)")
    // The JSON is the entries alone, whatever their number.
    expect(securityEventsListed(Option.some("acme"), [event(1)]).json).toHaveLength(1)
  })
})

/** The e-mail of the penetration test (issue 25): it retitles the window and paints "attacker" red. */
const HostileEmail = "\u001b]0;pwned\u0007\u001b[31mattacker\u001b[0m"

layer(FakeAdminLive)("portfolio audit against the console's admin API", (it) => {
  it.effect("--unattributed shows the control characters of a typed e-mail as escapes, never sends them to the terminal; --json keeps the exact e-mail", () =>
    Effect.gen(function*() {
      const { state } = yield* FakeAdmin
      state.securityEvents.push(new SecurityEvent({ ...event(1), actorEmail: HostileEmail }))
      const run = yield* portfolio(["audit", "--unattributed"])
      expect(run.code).toBe(0)
      expect(run.stdout).toBe("2026-11-01T00:00:01.000Z  sign_in_failed         \\x1b]0;pwned\\x07\\x1b[31mattacker\\x1b[0m  from 203.0.113.7")
      expect(controlCharactersIn(run.stdout)).toEqual([])
      const json = yield* portfolio(["audit", "--unattributed", "--json"])
      expect(JSON.parse(json.stdout)[0].actorEmail).toBe(HostileEmail)
    }))
})
