import { describe, expect, it } from "@effect/vitest"
import { DateTime, Result, Option } from "effect"
import { MaxGraceSeconds, parseEventKinds, parseGraceDuration, parseSince } from "../src/WebhookInput.js"

const left = <A>(either: Result.Result<A, string>) => Option.getOrUndefined(Result.getFailure(either))

describe("webhook flags", () => {
  it("a grace is a whole number with ms, s, m, h or d, in whole seconds", () => {
    expect(["30s", "15m", "24h", "7d", "5000ms", "0", "0s", " 2h "].map(parseGraceDuration)).toEqual(
      [30, 900, 86_400, 604_800, 5, 0, 0, 7200].map(Result.succeed)
    )
  })

  it("refuses what is not a duration, a fraction of a second and more than 7 days", () => {
    for (const garbage of ["", "24", "1.5h", "-1h", "h", "24 h", "1w", "24H", "24hours", "1h30m"]) {
      expect([garbage, left(parseGraceDuration(garbage))]).toEqual([
        garbage,
        `'${garbage}' is not a duration: write a whole number and a unit, ms, s, m, h or d (30s, 15m, 24h, 7d).`
      ])
    }
    expect(left(parseGraceDuration("1500ms"))).toBe("'1500ms' is not a whole number of seconds.")
    expect(left(parseGraceDuration("8d"))).toBe(`'8d' is longer than the grace allowed, 7d (${MaxGraceSeconds} seconds).`)
    expect(parseGraceDuration(`${MaxGraceSeconds}s`)).toEqual(Result.succeed(MaxGraceSeconds))
    expect(left(parseGraceDuration(`${MaxGraceSeconds + 1}s`))).toContain("longer than the grace allowed")
  })

  it("events are comma-separated kinds of the catalogue, kept in order, once each", () => {
    expect(parseEventKinds("das.submitted")).toEqual(Result.succeed(["das.submitted"]))
    expect(parseEventKinds(" application.updated , application.created,application.updated,")).toEqual(
      Result.succeed(["application.updated", "application.created"])
    )
  })

  it("an unknown kind is named with the list of valid kinds; nothing at all is refused too", () => {
    const kinds = "the kinds are application.created, application.updated, das.submitted."
    expect(left(parseEventKinds("application.created,app.deleted"))).toBe(`Unknown event kind 'app.deleted': ${kinds}`)
    expect(left(parseEventKinds("x,das.submitted,Y"))).toBe(`Unknown event kinds 'x', 'Y': ${kinds}`)
    expect(left(parseEventKinds(""))).toBe(`No event kind given: ${kinds}`)
    expect(left(parseEventKinds(" , "))).toBe(`No event kind given: ${kinds}`)
  })

  it("since is a date (midnight UTC) or a time with Z or an offset", () => {
    const at = (text: string) => Result.map(parseSince(text), DateTime.formatIso)
    expect(at("2026-07-01")).toEqual(Result.succeed("2026-07-01T00:00:00.000Z"))
    expect(at("2026-07-01T10:00:00Z")).toEqual(Result.succeed("2026-07-01T10:00:00.000Z"))
    expect(at("2026-07-01T10:00+02:00")).toEqual(Result.succeed("2026-07-01T08:00:00.000Z"))
    expect(at("2026-07-01T10:00:00.250-01:30")).toEqual(Result.succeed("2026-07-01T11:30:00.250Z"))
  })

  it("since refuses a time without zone, an impossible day and anything else", () => {
    expect(left(parseSince("2026-07-01T10:00:00"))).toBe("'2026-07-01T10:00:00' has no time zone: add Z (UTC) or an offset such as +02:00.")
    for (const garbage of ["yesterday", "2026-02-30", "2026-13-01", "2026-07-01T25:00Z", "1751364000", "07/01/2026", ""]) {
      expect([garbage, left(parseSince(garbage))]).toEqual([
        garbage,
        `'${garbage}' is not an ISO 8601 time: write 2026-07-01 or 2026-07-01T10:00:00Z.`
      ])
    }
  })
})
