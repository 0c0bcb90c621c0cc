import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { FakeAdmin, FakeAdminLive, partnerSecret, tenantIdOf } from "./support/FakeAdminApis.js"
import { portfolio, problem, TestOperator } from "./support/RunCli.js"

layer(FakeAdminLive)("portfolio partner against the gateway's admin API", (it) => {
  it.effect("create --json prints client_id and client_secret, for the tenant the slug names, signed as the operator", () =>
    Effect.gen(function*() {
      const { state } = yield* FakeAdmin
      yield* portfolio(["tenant", "create", "acme", "--admin-email", "admin@acme.example"])
      const calls = state.callers.length
      const run = yield* portfolio(["partner", "create", "--tenant", "acme", "--name", "erp-sync", "--scope", "read", "--json"])
      expect(run.stderr).toBe("")
      expect(run.code).toBe(0)
      const printed = JSON.parse(run.stdout)
      expect(printed).toEqual({
        client_id: "service-partner-erp-sync",
        client_secret: printed.client_secret,
        tenant: "acme",
        tenantId: yield* tenantIdOf("acme"),
        scope: "read",
        state: "enabled",
        previousSecretExpiresAt: null
      })
      expect(printed.client_secret).toMatch(/^ap_cs_/)
      // Provisioning resolves the slug, then the gateway creates the client.
      expect(state.callers.slice(calls)).toEqual([`${TestOperator}/operator/admin`, `${TestOperator}/operator/admin`])
    }))

  it.effect("create for a person shows both credentials and says the secret is shown once; a taken name exits 1", () =>
    Effect.gen(function*() {
      yield* portfolio(["tenant", "create", "beta", "--admin-email", "admin@beta.example"])
      const run = yield* portfolio(["partner", "create", "--tenant", "beta", "--name", "billing", "--scope", "write"])
      expect(run.code).toBe(0)
      const lines = run.stdout.split("\n")
      expect(lines[0]).toBe("Partner client service-partner-billing created in beta (scope write).")
      expect(lines[1]).toBe("  client_id:     service-partner-billing")
      expect(lines[2]).toMatch(/^ {2}client_secret: ap_cs_\d{46}$/)
      expect(lines.at(-1)).toBe("The secret is shown this once; store it now.")
      const again = yield* portfolio(["partner", "create", "--tenant", "beta", "--name", "billing", "--scope", "read", "--json"])
      expect(again.code).toBe(1)
      expect(again.stdout).toBe("")
      expect(JSON.parse(again.stderr)).toEqual(
        problem("CONFLICT", "conflict", "Conflict", 409, "This tenant has a partner client named 'billing' already; choose another name.")
      )
    }))

  it.effect("refuses a name that is not a slug or a scope that is not read or write before any call", () =>
    Effect.gen(function*() {
      const { state } = yield* FakeAdmin
      const calls = state.callers.length
      for (const args of [["--name", "Bad_Name", "--scope", "read"], ["--name", "ok", "--scope", "admin"]]) {
        const run = yield* portfolio(["partner", "create", "--tenant", "acme", ...args, "--json"])
        // A usage error: exit code 2, nothing sent.
        expect(run.code).toBe(2)
        expect(run.stdout).toBe("")
      }
      expect(state.callers.length).toBe(calls)
    }))

  it.effect("list --json prints the tenant's clients as the contract encodes them, without secrets", () =>
    Effect.gen(function*() {
      yield* portfolio(["tenant", "create", "gamma", "--admin-email", "admin@gamma.example"])
      yield* portfolio(["partner", "create", "--tenant", "gamma", "--name", "gamma-one", "--scope", "read"])
      const run = yield* portfolio(["partner", "list", "--tenant", "gamma", "--json"])
      expect(run.code).toBe(0)
      expect(JSON.parse(run.stdout)).toEqual([{
        clientId: "service-partner-gamma-one",
        tenantId: yield* tenantIdOf("gamma"),
        name: "gamma-one",
        scope: "read",
        state: "enabled",
        previousSecretExpiresAt: null,
        createdAt: "2026-07-01T10:00:00.000Z",
        updatedAt: "2026-07-01T10:00:00.000Z"
      }])
      expect(run.stdout).not.toContain("ap_cs_")
      const human = yield* portfolio(["partner", "list", "--tenant", "gamma"])
      expect(human.stdout).toBe("service-partner-gamma-one  enabled   scope read   created 2026-07-01T10:00:00.000Z")
    }))

  it.effect("rotate-secret sends the grace (24h by default, 0 allowed, beyond 7d refused) and prints the new secret", () =>
    Effect.gen(function*() {
      const { state } = yield* FakeAdmin
      yield* portfolio(["tenant", "create", "delta", "--admin-email", "admin@delta.example"])
      yield* portfolio(["partner", "create", "--tenant", "delta", "--name", "rotor", "--scope", "read"])
      const byDefault = yield* portfolio(["partner", "rotate-secret", "service-partner-rotor", "--json"])
      expect(JSON.parse(byDefault.stdout)).toMatchObject({
        client_id: "service-partner-rotor",
        client_secret: partnerSecret(state.partners.size + 1),
        previousSecretExpiresAt: "2026-07-02T10:00:00.000Z"
      })
      const none = yield* portfolio(["partner", "rotate-secret", "service-partner-rotor", "--grace", "0"])
      expect(none.stdout.split("\n").slice(0, 2)).toEqual(["Secret of partner client service-partner-rotor rotated.", "The previous secret is no longer accepted."])
      const calls = state.callers.length
      const tooLong = yield* portfolio(["partner", "rotate-secret", "service-partner-rotor", "--grace", "8d"])
      expect(tooLong.code).toBe(2)
      expect(state.callers.length).toBe(calls)
    }))

  it.effect("disable and enable print the state; an unknown client exits 1 with the 404", () =>
    Effect.gen(function*() {
      yield* portfolio(["tenant", "create", "eps", "--admin-email", "admin@eps.example"])
      yield* portfolio(["partner", "create", "--tenant", "eps", "--name", "flip", "--scope", "read"])
      const disabled = yield* portfolio(["partner", "disable", "service-partner-flip", "--json"])
      expect(JSON.parse(disabled.stdout)).toMatchObject({ clientId: "service-partner-flip", state: "disabled" })
      const enabled = yield* portfolio(["partner", "enable", "service-partner-flip"])
      expect(enabled.stdout).toBe("Partner client service-partner-flip enabled.")
      const missing = yield* portfolio(["partner", "disable", "service-partner-nobody", "--json"])
      expect(missing.code).toBe(1)
      expect(JSON.parse(missing.stderr)).toEqual(problem("NOT_FOUND", "not-found", "Not found", 404, "No partner client has the id 'service-partner-nobody'."))
    }))
})
