import { expect, layer } from "@effect/vitest"
import { Member, PatRequest } from "@portfolio/domain"
import { Effect } from "effect"
import { FakeAdmin, FakeAdminLive, FixedTime, PatId, PatToken, patRequestId, tenantIdOf } from "./support/FakeAdminApis.js"
import { controlCharactersIn, portfolio, problem, TestOperator } from "./support/RunCli.js"

const justification = "Nightly export of the application list to the CMDB."

/** A tenant with a viewer besides its admin, as provisioning would hold them. */
const tenantWithViewer = (slug: string) =>
  Effect.gen(function*() {
    const { state } = yield* FakeAdmin
    yield* portfolio(["tenant", "create", slug, "--admin-email", `admin@${slug}.example`])
    state.tenants.get(slug)!.members.push(
      new Member({ userSub: `sub-viewer-${slug}`, userEmail: `Viewer@${slug}.example`, arbRole: "viewer", source: "INVITATION", grantedAt: FixedTime })
    )
    return yield* tenantIdOf(slug)
  })

/** The id the fake gives the next request filed. */
const nextRequestId = Effect.map(FakeAdmin, ({ state }) => patRequestId(state.filedRequests.size + 1))

layer(FakeAdminLive)("portfolio pat request|requests|approve|deny against the admin APIs", (it) => {
  it.effect("pat request --json resolves the member in provisioning and files the request at the gateway, printing its id", () =>
    Effect.gen(function*() {
      const { state } = yield* FakeAdmin
      const tenantId = yield* tenantWithViewer("req-a")
      const id = yield* nextRequestId
      const calls = state.callers.length
      const run = yield* portfolio([
        "pat", "request", "--tenant", "req-a", "--email", "viewer@req-a.example", "--scope", "read", "--days", "30", "--justification", `  ${justification} `, "--json"
      ])
      expect(run.stderr).toBe("")
      expect(run.code).toBe(0)
      expect(JSON.parse(run.stdout)).toEqual({
        id,
        tenantId,
        userSub: "sub-viewer-req-a",
        email: "Viewer@req-a.example",
        role: "viewer",
        scope: "read",
        days: 30,
        justification,
        status: "pending",
        createdAt: "2026-07-01T10:00:00.000Z",
        expiresAt: "2026-07-31T10:00:00.000Z",
        decidedAt: null,
        decidedBy: null,
        reason: null,
        patId: null
      })
      expect(state.callers.slice(calls)).toEqual([`${TestOperator}/operator/admin`, `${TestOperator}/operator/admin`])
    }))

  it.effect("pat request prints lines for a person, 90 days by default", () =>
    Effect.gen(function*() {
      yield* tenantWithViewer("req-b")
      const id = yield* nextRequestId
      const run = yield* portfolio(["pat", "request", "--tenant", "req-b", "--email", "admin@req-b.example", "--scope", "write", "--justification", justification])
      expect(run.code).toBe(0)
      expect(run.stdout.split("\n")).toEqual([
        `PAT request ${id} filed for admin@req-b.example in req-b: scope write, 90 days, pending.`,
        `Approve it with \`portfolio pat approve ${id}\`, or deny it with \`portfolio pat deny ${id} --reason <text>\`.`
      ])
    }))

  it.effect("pat request refuses a short justification before calling anything (usage, exit 2)", () =>
    Effect.gen(function*() {
      const { state } = yield* FakeAdmin
      const calls = state.callers.length
      const run = yield* portfolio(["pat", "request", "--tenant", "req-b", "--email", "admin@req-b.example", "--scope", "read", "--justification", "because"])
      expect(run.code).toBe(2)
      expect(run.stdout).toBe("")
      expect(state.callers.length).toBe(calls)
      const missing = yield* portfolio(["pat", "request", "--tenant", "req-b", "--email", "admin@req-b.example", "--scope", "read"])
      expect(missing.code).toBe(2)
    }))

  it.effect("pat request for someone who is not a member exits 1 with NOT_FOUND", () =>
    Effect.gen(function*() {
      yield* tenantWithViewer("req-c")
      const run = yield* portfolio(["pat", "request", "--tenant", "req-c", "--email", "nobody@req-c.example", "--scope", "read", "--justification", justification])
      expect(run.code).toBe(1)
      expect(JSON.parse(run.stderr)).toEqual(problem("NOT_FOUND", "not-found", "Not found", 404, "nobody@req-c.example is not a member of req-c."))
    }))

  it.effect("pat approve prints the token once, in JSON and for a person; a second approval exits 1 with 409", () =>
    Effect.gen(function*() {
      yield* tenantWithViewer("req-d")
      const first = JSON.parse((yield* portfolio(["pat", "request", "--tenant", "req-d", "--email", "admin@req-d.example", "--scope", "write", "--days", "7", "--justification", justification, "--json"])).stdout)
      const json = yield* portfolio(["pat", "approve", first.id, "--json"])
      expect(json.code).toBe(0)
      expect(JSON.parse(json.stdout)).toEqual({
        request: {
          ...first,
          status: "approved",
          decidedAt: "2026-07-01T10:00:00.000Z",
          decidedBy: { userSub: TestOperator, email: null, role: "operator" },
          patId: PatId
        },
        pat: { id: PatId, token: PatToken, tokenPrefix: PatToken.slice(0, 10), scope: "write", expiresAt: "2026-07-08T10:00:00.000Z" }
      })
      const again = yield* portfolio(["pat", "approve", first.id, "--json"])
      expect(again.code).toBe(1)
      expect(again.stdout).toBe("")
      expect(JSON.parse(again.stderr)).toEqual(
        problem("CONFLICT", "conflict", "Conflict", 409, `PAT request ${first.id} is approved: only a pending request can be approved or denied.`)
      )
      const second = JSON.parse((yield* portfolio(["pat", "request", "--tenant", "req-d", "--email", "viewer@req-d.example", "--scope", "read", "--justification", justification, "--json"])).stdout)
      const human = yield* portfolio(["pat", "approve", second.id])
      expect(human.code).toBe(0)
      expect(human.stdout.split("\n")).toEqual([
        `PAT request ${second.id} approved: personal access token for Viewer@req-d.example (scope read):`,
        "",
        `  ${PatToken}`,
        "",
        "It is shown this once; hand it to Viewer@req-d.example through a secure channel.",
        `  id:      ${PatId}`,
        "  expires: 2026-09-29T10:00:00.000Z"
      ])
    }))

  it.effect("pat deny sends the reason and prints the denied request; an unknown request exits 1 with 404; a bad id is a usage error", () =>
    Effect.gen(function*() {
      yield* tenantWithViewer("req-e")
      const filed = JSON.parse((yield* portfolio(["pat", "request", "--tenant", "req-e", "--email", "viewer@req-e.example", "--scope", "read", "--justification", justification, "--json"])).stdout)
      const json = yield* portfolio(["pat", "deny", filed.id, "--reason", "Use the team's read token.", "--json"])
      expect(json.code).toBe(0)
      expect(JSON.parse(json.stdout)).toMatchObject({ id: filed.id, status: "denied", reason: "Use the team's read token.", decidedBy: { userSub: TestOperator, role: "operator" } })
      const other = JSON.parse((yield* portfolio(["pat", "request", "--tenant", "req-e", "--email", "viewer@req-e.example", "--scope", "read", "--justification", justification, "--json"])).stdout)
      const human = yield* portfolio(["pat", "deny", other.id, "--reason", "Not needed."])
      expect(human.stdout).toBe(`PAT request ${other.id} of Viewer@req-e.example denied: Not needed.`)
      const unknown = patRequestId(999)
      const missing = yield* portfolio(["pat", "deny", unknown, "--reason", "no"])
      expect(missing.code).toBe(1)
      expect(JSON.parse(missing.stderr)).toEqual(problem("NOT_FOUND", "not-found", "Not found", 404, `No PAT request has the id ${unknown}.`))
      expect((yield* portfolio(["pat", "deny", filed.id])).code).toBe(2)
      expect((yield* portfolio(["pat", "approve", "not-a-uuid"])).code).toBe(2)
    }))

  it.effect("pat requests lists a tenant's requests newest first, by state, in JSON and for a person", () =>
    Effect.gen(function*() {
      const tenantId = yield* tenantWithViewer("req-f")
      const file = (email: string) =>
        Effect.map(portfolio(["pat", "request", "--tenant", "req-f", "--email", email, "--scope", "read", "--justification", justification, "--json"]), (run) => JSON.parse(run.stdout))
      const first = yield* file("viewer@req-f.example")
      const second = yield* file("admin@req-f.example")
      yield* portfolio(["pat", "deny", first.id, "--reason", "Not needed."])
      const all = yield* portfolio(["pat", "requests", "--tenant", "req-f", "--json"])
      expect(JSON.parse(all.stdout).map((r: any) => [r.id, r.status, r.tenantId])).toEqual([[second.id, "pending", tenantId], [first.id, "denied", tenantId]])
      const pending = yield* portfolio(["pat", "requests", "--tenant", "req-f", "--status", "pending"])
      expect(pending.stdout.split("\n")).toEqual([
        `${second.id}  pending   admin@req-f.example (tenant-admin), scope read, 90 days, filed 2026-07-01T10:00:00.000Z; awaiting a tenant-admin until 2026-07-31T10:00:00.000Z`,
        `    ${justification}`
      ])
      const denied = yield* portfolio(["pat", "requests", "--tenant", "req-f", "--status", "denied"])
      expect(denied.stdout.split("\n")[0]).toBe(
        `${first.id}  denied    Viewer@req-f.example (viewer), scope read, 90 days, filed 2026-07-01T10:00:00.000Z; denied by ${TestOperator} (operator) at 2026-07-01T10:00:00.000Z: Not needed.`
      )
      expect((yield* portfolio(["pat", "requests", "--tenant", "req-f", "--status", "approved"])).stdout).toBe("No approved PAT request in req-f.")
      expect(JSON.parse((yield* portfolio(["pat", "requests", "--tenant", "req-f", "--status", "approved", "--json"])).stdout)).toEqual([])
      const unknownTenant = yield* portfolio(["pat", "requests", "--tenant", "nowhere"])
      expect(unknownTenant.code).toBe(1)
      expect(JSON.parse(unknownTenant.stderr).errorCode).toBe("NOT_FOUND")
      expect(JSON.parse((yield* portfolio(["pat", "requests", "--tenant", "req-f", "--status", "expired", "--json"])).stdout)).toEqual([])
      expect((yield* portfolio(["pat", "requests", "--tenant", "req-f", "--status", "lapsed"])).code).toBe(2)
    }))

  it.effect("pat requests shows a stored justification's control characters as escapes, so that it cannot rewrite the line naming the requester; --json keeps it exact", () =>
    Effect.gen(function*() {
      const { state } = yield* FakeAdmin
      yield* tenantWithViewer("req-g")
      const filed = JSON.parse((yield* portfolio([
        "pat", "request", "--tenant", "req-g", "--email", "viewer@req-g.example", "--scope", "read", "--justification", justification, "--json"
      ])).stdout)
      // Kept before the contract refused control characters: CR, erase the line, cursor up, then a
      // line that passes for another requester's.
      const hostile = `${justification}\r\u001b[2K\u001b[1A${filed.id}  pending   admin@req-g.example (tenant-admin)\u202e`
      state.filedRequests.set(filed.id, new PatRequest({ ...state.filedRequests.get(filed.id)!, justification: hostile }))
      const run = yield* portfolio(["pat", "requests", "--tenant", "req-g"])
      expect(run.code).toBe(0)
      expect(run.stdout.split("\n")).toEqual([
        `${filed.id}  pending   Viewer@req-g.example (viewer), scope read, 90 days, filed 2026-07-01T10:00:00.000Z; awaiting a tenant-admin until 2026-07-31T10:00:00.000Z`,
        `    ${justification}\\r\\x1b[2K\\x1b[1A${filed.id}  pending   admin@req-g.example (tenant-admin)\\u202e`
      ])
      expect(controlCharactersIn(run.stdout)).toEqual([])
      const json = yield* portfolio(["pat", "requests", "--tenant", "req-g", "--json"])
      expect(JSON.parse(json.stdout)[0].justification).toBe(hostile)
    }))

  it.effect("pat request and pat deny refuse control characters in the justification and the reason before calling anything (usage, exit 2)", () =>
    Effect.gen(function*() {
      const { state } = yield* FakeAdmin
      yield* tenantWithViewer("req-h")
      const calls = state.callers.length
      const request = yield* portfolio([
        "pat", "request", "--tenant", "req-h", "--email", "viewer@req-h.example", "--scope", "read", "--justification", `${justification}\r\u001b[2K`
      ])
      expect(request.code).toBe(2)
      const deny = yield* portfolio(["pat", "deny", patRequestId(1), "--reason", "No.\u001b[1A"])
      expect(deny.code).toBe(2)
      expect(state.callers.length).toBe(calls)
    }))
})
