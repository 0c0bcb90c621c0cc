import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { FakeAdmin, FakeAdminLive, scimTokenId, scimTokenSecret, tenantIdOf } from "./support/FakeAdminApis.js"
import { portfolio, problem, TestOperator } from "./support/RunCli.js"

const operatorCall = `${TestOperator}/operator/admin`

layer(FakeAdminLive)("portfolio scim against the gateway's admin API", (it) => {
  it.effect("token --json prints the token once with its id, prefix and label, for the tenant the slug names, signed as the operator", () =>
    Effect.gen(function*() {
      const { state } = yield* FakeAdmin
      yield* portfolio(["tenant", "create", "acme", "--admin-email", "admin@acme.example"])
      const calls = state.callers.length
      const run = yield* portfolio(["scim", "token", "--tenant", "acme", "--label", "Okta production", "--json"])
      expect(run.stderr).toBe("")
      expect(run.code).toBe(0)
      const n = state.scimTokens.length
      expect(JSON.parse(run.stdout)).toEqual({
        id: scimTokenId(n),
        tenantId: yield* tenantIdOf("acme"),
        tenant: "acme",
        label: "Okta production",
        tokenPrefix: "ap_scim_abc",
        createdBy: TestOperator,
        createdAt: "2026-07-01T10:00:00.000Z",
        lastUsedAt: null,
        revokedAt: null,
        token: scimTokenSecret(n)
      })
      // Provisioning resolves the slug, then the gateway makes the token.
      expect(state.callers.slice(calls)).toEqual([operatorCall, operatorCall])
    }))

  it.effect("token for a person shows the token once, says so and where it goes; a third active token exits 1 with the 409", () =>
    Effect.gen(function*() {
      const { state } = yield* FakeAdmin
      yield* portfolio(["tenant", "create", "beta", "--admin-email", "admin@beta.example"])
      const run = yield* portfolio(["scim", "token", "--tenant", "beta", "--label", "Entra ID"])
      expect(run.code).toBe(0)
      const n = state.scimTokens.length
      expect(run.stdout.split("\n")).toEqual([
        "SCIM token \"Entra ID\" created in beta:",
        "",
        `  ${scimTokenSecret(n)}`,
        "",
        `  id:     ${scimTokenId(n)}`,
        "  prefix: ap_scim_abc",
        "  label:  Entra ID",
        "",
        "Paste it in the identity tool with the SCIM base URL <public API base URL>/scim/v2 (<the gateway's address>/api/v1/scim/v2).",
        "It is shown this once; store it now."
      ])
      expect(run.stdout.split(scimTokenSecret(n)).length - 1).toBe(1)
      // The replacement of a rotation is the second; a third is refused, in the gateway's words.
      expect((yield* portfolio(["scim", "token", "--tenant", "beta", "--label", "Entra ID next"])).code).toBe(0)
      const third = yield* portfolio(["scim", "token", "--tenant", "beta", "--label", "One too many", "--json"])
      expect(third.code).toBe(1)
      expect(third.stdout).toBe("")
      expect(JSON.parse(third.stderr)).toEqual(problem(
        "CONFLICT",
        "conflict",
        "Conflict",
        409,
        "This tenant has 2 active SCIM tokens already, the most it may hold: revoke the one its identity tool no longer uses first."
      ))
    }))

  it.effect("refuses a label that is empty, longer than 80 characters or of several lines, and an id that is no UUID, before any call", () =>
    Effect.gen(function*() {
      const { state } = yield* FakeAdmin
      const calls = state.callers.length
      for (const label of ["", "x".repeat(81), "Okta\nproduction"]) {
        const run = yield* portfolio(["scim", "token", "--tenant", "acme", "--label", label, "--json"])
        // A usage error: exit code 2, nothing sent.
        expect(run.code, JSON.stringify(label)).toBe(2)
        expect(run.stdout).toBe("")
      }
      expect((yield* portfolio(["scim", "revoke", "--tenant", "acme", "not-a-uuid"])).code).toBe(2)
      expect(state.callers.length).toBe(calls)
    }))

  it.effect("tokens --json prints the tenant's tokens as the contract encodes them, never a token; for a person one line each", () =>
    Effect.gen(function*() {
      const { state } = yield* FakeAdmin
      yield* portfolio(["tenant", "create", "gamma", "--admin-email", "admin@gamma.example"])
      const empty = yield* portfolio(["scim", "tokens", "--tenant", "gamma"])
      expect(empty.stdout).toBe("No SCIM token in gamma.")
      yield* portfolio(["scim", "token", "--tenant", "gamma", "--label", "Okta"])
      const first = state.scimTokens.length
      yield* portfolio(["scim", "token", "--tenant", "gamma", "--label", "JumpCloud"])
      yield* portfolio(["scim", "revoke", "--tenant", "gamma", scimTokenId(first)])
      const run = yield* portfolio(["scim", "tokens", "--tenant", "gamma", "--json"])
      expect(run.code).toBe(0)
      const tenantId = yield* tenantIdOf("gamma")
      const listed = (n: number, label: string, revokedAt: string | null) => ({
        id: scimTokenId(n),
        tenantId,
        label,
        tokenPrefix: "ap_scim_abc",
        createdBy: TestOperator,
        createdAt: "2026-07-01T10:00:00.000Z",
        lastUsedAt: null,
        revokedAt
      })
      expect(JSON.parse(run.stdout)).toEqual([listed(first + 1, "JumpCloud", null), listed(first, "Okta", "2026-07-01T11:00:00.000Z")])
      expect(run.stdout).not.toContain(scimTokenSecret(first))
      const human = yield* portfolio(["scim", "tokens", "--tenant", "gamma"])
      expect(human.stdout.split("\n")).toEqual([
        `${scimTokenId(first + 1)}  ap_scim_abc  active   label "JumpCloud"  created 2026-07-01T10:00:00.000Z by ${TestOperator}  last used never`,
        `${scimTokenId(first)}  ap_scim_abc  revoked  label "Okta"  created 2026-07-01T10:00:00.000Z by ${TestOperator}  last used never  revoked 2026-07-01T11:00:00.000Z`
      ])
    }))

  it.effect("revoke prints the revoked token; an unknown id, or another tenant's, exits 1 with the 404 and revokes nothing", () =>
    Effect.gen(function*() {
      const { state } = yield* FakeAdmin
      yield* portfolio(["tenant", "create", "delta", "--admin-email", "admin@delta.example"])
      yield* portfolio(["tenant", "create", "eps", "--admin-email", "admin@eps.example"])
      yield* portfolio(["scim", "token", "--tenant", "delta", "--label", "OneLogin"])
      const id = scimTokenId(state.scimTokens.length)
      const foreign = yield* portfolio(["scim", "revoke", "--tenant", "eps", id, "--json"])
      expect(foreign.code).toBe(1)
      expect(JSON.parse(foreign.stderr)).toEqual(problem("NOT_FOUND", "not-found", "Not found", 404, `This tenant has no SCIM token with the id ${id}.`))
      expect(state.scimTokens.find((t) => t.id === id)!.revokedAt).toBeNull()
      const revoked = yield* portfolio(["scim", "revoke", "--tenant", "delta", id, "--json"])
      expect(revoked.code).toBe(0)
      expect(JSON.parse(revoked.stdout)).toMatchObject({ id, tenant: "delta", label: "OneLogin", revokedAt: "2026-07-01T11:00:00.000Z" })
      expect(revoked.stdout).not.toContain("ap_scim_abc0")
      const human = yield* portfolio(["scim", "revoke", "--tenant", "delta", id])
      expect(human.stdout).toBe(
        `SCIM token ${id} (ap_scim_abc, "OneLogin") of delta revoked at 2026-07-01T11:00:00.000Z: the identity tool holding it is refused within a second.`
      )
      const unknown = "00000000-0000-4000-8000-000000000000"
      const missing = yield* portfolio(["scim", "revoke", "--tenant", "delta", unknown, "--json"])
      expect(missing.code).toBe(1)
      expect(JSON.parse(missing.stderr)).toEqual(problem("NOT_FOUND", "not-found", "Not found", 404, `This tenant has no SCIM token with the id ${unknown}.`))
      const noTenant = yield* portfolio(["scim", "tokens", "--tenant", "nowhere", "--json"])
      expect(noTenant.code).toBe(1)
      expect(JSON.parse(noTenant.stderr)).toEqual(problem("NOT_FOUND", "not-found", "Not found", 404, "No tenant 'nowhere'."))
    }))
})
