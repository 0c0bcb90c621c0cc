import { describe, expect, it, layer } from "@effect/vitest"
import { Member, Tenant, TenantWithAdmin, WelcomeLink } from "@portfolio/domain"
import { DateTime, Effect } from "effect"
import { tenantCreated } from "../src/Output.js"
import { FakeAdmin, FakeAdminLive, FixedTime, PatId, PatToken, tenantId, tenantIdOf, welcomeId } from "./support/FakeAdminApis.js"
import { portfolio, problem, TestOperator } from "./support/RunCli.js"

/** The welcome invitation's id the fake gave the tenant of this id (both follow the order of creation). */
const welcomeIdOf = (tenantId: string) => welcomeId(Number(tenantId.slice(-12)))

layer(FakeAdminLive)("portfolio against the admin APIs", (it) => {
  it.effect("tenant create --json prints the tenant id and the admin's userSub, signed as the operator", () =>
    Effect.gen(function*() {
      const { state } = yield* FakeAdmin
      const calls = state.callers.length
      const run = yield* portfolio(["tenant", "create", "acme", "--admin-email", "admin@acme.example", "--json"])
      const id = yield* tenantIdOf("acme")
      expect(run).toEqual({
        code: 0,
        stdout: JSON.stringify({
          tenantId: id,
          slug: "acme",
          adminEmail: "admin@acme.example",
          adminUserSub: "sub-admin-acme",
          createdAt: "2026-07-01T10:00:00.000Z",
          welcome: { invitationId: welcomeIdOf(id), expiresAt: "2026-07-08T10:00:00.000Z" }
        }),
        stderr: ""
      })
      expect(state.callers.slice(calls)).toEqual([`${TestOperator}/operator/admin`])
    }))

  it.effect("tenant create prints lines for a person, options before or after the slug", () =>
    Effect.gen(function*() {
      const run = yield* portfolio(["tenant", "create", "--admin-email", "boss@beta.example", "beta"])
      const id = yield* tenantIdOf("beta")
      expect(run.code).toBe(0)
      expect(run.stdout.split("\n")).toEqual([
        "Tenant beta created.",
        `  tenant id:     ${id}`,
        "  admin:         boss@beta.example (tenant-admin)",
        "  admin userSub: sub-admin-beta",
        "A link to set a password was mailed to boss@beta.example, valid until 2026-07-08T10:00:00.000Z."
      ])
    }))

  it.effect("tenant create says that no link was mailed when the admin's account already has a password, in both forms", () =>
    Effect.gen(function*() {
      const { state } = yield* FakeAdmin
      state.passwords.add("known@theta.example")
      const human = yield* portfolio(["tenant", "create", "theta", "--admin-email", "Known@Theta.example"])
      expect(human.code).toBe(0)
      expect(human.stdout.split("\n").at(-1)).toBe("No link was mailed: the account of Known@Theta.example already has a password.")
      expect(human.stdout).not.toContain("valid until")
      const json = yield* portfolio(["tenant", "create", "iota", "--admin-email", "known@theta.example", "--json"])
      expect(JSON.parse(json.stdout)).toMatchObject({ slug: "iota", adminEmail: "known@theta.example", welcome: null })
    }))

  it.effect("tenant welcome mails a tenant-admin a new link, in both forms, and passes on a refusal", () =>
    Effect.gen(function*() {
      yield* portfolio(["tenant", "create", "kappa", "--admin-email", "boss@kappa.example"])
      const human = yield* portfolio(["tenant", "welcome", "kappa", "--email", "boss@kappa.example"])
      expect(human).toEqual({
        code: 0,
        stdout: "A new link to set a password was mailed to boss@kappa.example (kappa), valid until 2026-07-08T10:00:00.000Z; earlier links no longer work.",
        stderr: ""
      })
      const json = yield* portfolio(["tenant", "welcome", "--email", "boss@kappa.example", "kappa", "--json"])
      expect(JSON.parse(json.stdout)).toEqual({ slug: "kappa", email: "boss@kappa.example", invitationId: welcomeId(99), expiresAt: "2026-07-08T10:00:00.000Z" })
      const { state } = yield* FakeAdmin
      state.passwords.add("boss@kappa.example")
      const refused = yield* portfolio(["tenant", "welcome", "kappa", "--email", "boss@kappa.example", "--json"])
      expect(refused.code).toBe(1)
      expect(refused.stdout).toBe("")
      expect(JSON.parse(refused.stderr)).toEqual(problem("CONFLICT", "conflict", "Conflict", 409, "This account already has a password."))
    }))

  it.effect("a refused tenant creation exits 1 with the problem on stderr and nothing on stdout", () =>
    Effect.gen(function*() {
      yield* portfolio(["tenant", "create", "gamma", "--admin-email", "a@gamma.example"])
      const run = yield* portfolio(["tenant", "create", "gamma", "--admin-email", "a@gamma.example", "--json"])
      expect(run.code).toBe(1)
      expect(run.stdout).toBe("")
      expect(JSON.parse(run.stderr)).toEqual(problem("CONFLICT", "conflict", "Conflict", 409, "Tenant 'gamma' exists."))
    }))

  it.effect("pat create resolves the member in provisioning and mints the token at the gateway", () =>
    Effect.gen(function*() {
      const { state } = yield* FakeAdmin
      yield* portfolio(["tenant", "create", "delta", "--admin-email", "Admin@Delta.example"])
      const id = yield* tenantIdOf("delta")
      const before = state.patRequests.length
      const run = yield* portfolio(["pat", "create", "--tenant", "delta", "--email", "admin@delta.example", "--scope", "read", "--json"])
      expect(run).toEqual({
        code: 0,
        stdout: JSON.stringify({
          id: PatId,
          token: PatToken,
          tokenPrefix: PatToken.slice(0, 10),
          scope: "read",
          expiresAt: "2026-09-29T10:00:00.000Z",
          tenant: "delta",
          email: "Admin@Delta.example",
          userSub: "sub-admin-delta"
        }),
        stderr: ""
      })
      const request = state.patRequests[before]
      expect(request && { ...request }).toEqual({
        tenantId: id,
        userSub: "sub-admin-delta",
        email: "Admin@Delta.example",
        role: "tenant-admin",
        scope: "read",
        days: 90
      })
    }))

  it.effect("pat create passes --days and shows the token once to a person", () =>
    Effect.gen(function*() {
      const { state } = yield* FakeAdmin
      yield* portfolio(["tenant", "create", "eps", "--admin-email", "admin@eps.example"])
      const run = yield* portfolio(["pat", "create", "--tenant", "eps", "--email", "admin@eps.example", "--scope", "write", "--days", "7"])
      expect(run.code).toBe(0)
      expect(state.patRequests.at(-1)?.days).toBe(7)
      expect(run.stdout.split("\n")).toEqual([
        "Personal access token for admin@eps.example in eps (scope write):",
        "",
        `  ${PatToken}`,
        "",
        "It is shown this once; store it now.",
        `  id:      ${PatId}`,
        "  expires: 2026-07-08T10:00:00.000Z"
      ])
    }))

  it.effect("pat create for someone who is not a member exits 1 with NOT_FOUND", () =>
    Effect.gen(function*() {
      yield* portfolio(["tenant", "create", "zeta", "--admin-email", "admin@zeta.example"])
      const run = yield* portfolio(["pat", "create", "--tenant", "zeta", "--email", "nobody@zeta.example", "--scope", "read"])
      expect(run.code).toBe(1)
      expect(run.stdout).toBe("")
      expect(JSON.parse(run.stderr)).toEqual(problem("NOT_FOUND", "not-found", "Not found", 404, "nobody@zeta.example is not a member of zeta."))
    }))

  it.effect("pat revoke takes the token or its id", () =>
    Effect.gen(function*() {
      const byToken = yield* portfolio(["pat", "revoke", PatToken, "--json"])
      expect(byToken).toEqual({ code: 0, stdout: JSON.stringify({ id: PatId, revokedAt: "2026-07-01T10:00:00.000Z" }), stderr: "" })
      const byId = yield* portfolio(["pat", "revoke", PatId])
      expect(byId.stdout).toBe(`Token ${PatId} revoked at 2026-07-01T10:00:00.000Z.`)
      const unknown = yield* portfolio(["pat", "revoke", "ap_pat_unknown", "--json"])
      expect(unknown.code).toBe(1)
      expect(JSON.parse(unknown.stderr)).toEqual(problem("NOT_FOUND", "not-found", "Not found", 404, "No such token."))
    }))

  it.effect("a usage error exits 2 with the parser's explanation and calls nothing", () =>
    Effect.gen(function*() {
      const { state } = yield* FakeAdmin
      const calls = state.callers.length
      const run = yield* portfolio(["pat", "create", "--tenant", "acme", "--email", "admin@acme.example", "--scope", "admin"])
      expect(run.code).toBe(2)
      expect(run.stdout).toBe("")
      expect(run.stderr).toContain("read")
      expect(run.stderr).toContain("write")
      expect(state.callers.length).toBe(calls)
      const badSlug = yield* portfolio(["seed", "demo", "--tenant", "Not A Slug"])
      expect(badSlug.code).toBe(2)
    }))
})

describe("tenant create's output", () => {
  const created = (welcome?: WelcomeLink | null) =>
    new TenantWithAdmin({
      tenant: new Tenant({ id: tenantId(1), slug: "acme", createdAt: FixedTime }),
      admin: new Member({ userSub: "sub-admin-acme", userEmail: "admin@acme.example", arbRole: "tenant-admin", source: "SIGNUP", grantedAt: FixedTime }),
      ...(welcome === undefined ? {} : { welcome })
    })

  it("says nothing of a link when provisioning does not tell (older than the field), and has no welcome in JSON", () => {
    const output = tenantCreated(created())
    expect(output.human).toHaveLength(4)
    expect(output.human.join("\n")).not.toMatch(/link|password/)
    expect(output.json).not.toHaveProperty("welcome")
  })

  it("tells the mailed link's end, and its invitation in JSON", () => {
    const output = tenantCreated(created(new WelcomeLink({ invitationId: welcomeId(1), expiresAt: DateTime.add(FixedTime, { days: 7 }) })))
    expect(output.human.at(-1)).toBe("A link to set a password was mailed to admin@acme.example, valid until 2026-07-08T10:00:00.000Z.")
    expect(output.json).toMatchObject({ welcome: { invitationId: welcomeId(1), expiresAt: "2026-07-08T10:00:00.000Z" } })
  })
})
