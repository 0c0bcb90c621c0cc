import { expect, layer } from "@effect/vitest"
import { Invitation } from "@portfolio/domain"
import { DateTime, Effect } from "effect"
import { FakeAdmin, FakeAdminLive, FixedTime } from "./support/FakeAdminApis.js"
import { portfolio, problem, TestOperator } from "./support/RunCli.js"

layer(FakeAdminLive)("portfolio against the admin APIs", (it) => {
  it.effect("mail list shows the kept mail, all or to one address", () =>
    Effect.gen(function*() {
      const all = yield* portfolio(["mail", "list", "--json"])
      expect(all.code).toBe(0)
      expect(JSON.parse(all.stdout)).toEqual([
        { id: 2, to: "ana@acme.example", subject: "You are invited to acme", text: "Accept:\nhttp://localhost:8084/accept/t2", createdAt: "2026-07-01T10:00:00.000Z" },
        { id: 1, to: "bob@acme.example", subject: "You are invited to acme", text: "Accept: http://localhost:8084/accept/t1", createdAt: "2026-07-01T10:00:00.000Z" }
      ])
      const toAna = yield* portfolio(["mail", "list", "--to", "ana@acme.example"])
      expect(toAna.stdout.split("\n")).toEqual([
        "#2  2026-07-01T10:00:00.000Z  to ana@acme.example: You are invited to acme",
        "    Accept:",
        "    http://localhost:8084/accept/t2",
        ""
      ])
      const none = yield* portfolio(["mail", "list", "--to", "nobody@acme.example"])
      expect(none.stdout).toBe("No mail kept.")
    }))

  it.effect("invitations list --tenant prints every invitation of the tenant, newest first, in both forms", () =>
    Effect.gen(function*() {
      const { state } = yield* FakeAdmin
      yield* portfolio(["tenant", "create", "kappa", "--admin-email", "admin@kappa.example"])
      const later = DateTime.add(FixedTime, { hours: 2 })
      state.invitations.set("kappa", [
        new Invitation({
          id: "44444444-4444-4444-8444-444444444442",
          email: "Ana@Kappa.example",
          arbRole: "architect",
          status: "PENDING",
          invitedByEmail: "admin@kappa.example",
          createdAt: later,
          expiresAt: DateTime.add(later, { days: 7 }),
          acceptedAt: null,
          revokedAt: null
        }),
        new Invitation({
          id: "44444444-4444-4444-8444-444444444441",
          email: "bob@kappa.example",
          arbRole: "viewer",
          status: "ACCEPTED",
          invitedByEmail: "admin@kappa.example",
          createdAt: FixedTime,
          expiresAt: DateTime.add(FixedTime, { days: 7 }),
          acceptedAt: DateTime.add(FixedTime, { hours: 1 }),
          revokedAt: null
        })
      ])
      const calls = state.callers.length
      const asJson = yield* portfolio(["invitations", "list", "--tenant", "kappa", "--json"])
      expect(asJson.code).toBe(0)
      expect(asJson.stderr).toBe("")
      expect(JSON.parse(asJson.stdout)).toEqual([
        {
          id: "44444444-4444-4444-8444-444444444442",
          email: "Ana@Kappa.example",
          arbRole: "architect",
          status: "PENDING",
          invitedByEmail: "admin@kappa.example",
          expiresAt: "2026-07-08T12:00:00.000Z",
          createdAt: "2026-07-01T12:00:00.000Z",
          acceptedAt: null,
          revokedAt: null
        },
        {
          id: "44444444-4444-4444-8444-444444444441",
          email: "bob@kappa.example",
          arbRole: "viewer",
          status: "ACCEPTED",
          invitedByEmail: "admin@kappa.example",
          expiresAt: "2026-07-08T10:00:00.000Z",
          createdAt: "2026-07-01T10:00:00.000Z",
          acceptedAt: "2026-07-01T11:00:00.000Z",
          revokedAt: null
        }
      ])
      expect(state.callers.slice(calls)).toEqual([`${TestOperator}/operator/admin`])
      const human = yield* portfolio(["invitations", "list", "--tenant", "kappa"])
      expect(human.stdout.split("\n")).toEqual([
        "44444444-4444-4444-8444-444444444442  PENDING   Ana@Kappa.example as architect, by admin@kappa.example, created 2026-07-01T12:00:00.000Z, expires 2026-07-08T12:00:00.000Z",
        "44444444-4444-4444-8444-444444444441  ACCEPTED  bob@kappa.example as viewer, by admin@kappa.example, created 2026-07-01T10:00:00.000Z, accepted 2026-07-01T11:00:00.000Z"
      ])
      yield* portfolio(["tenant", "create", "lambda", "--admin-email", "admin@lambda.example"])
      const none = yield* portfolio(["invitations", "list", "--tenant", "lambda"])
      expect(none).toEqual({ code: 0, stdout: "No invitation in lambda.", stderr: "" })
      const emptyJson = yield* portfolio(["invitations", "list", "--tenant", "lambda", "--json"])
      expect(emptyJson).toEqual({ code: 0, stdout: "[]", stderr: "" })
    }))

  it.effect("invitations list of an unknown tenant exits 1 with NOT_FOUND; a bad slug or no --tenant is a usage error", () =>
    Effect.gen(function*() {
      const { state } = yield* FakeAdmin
      const unknown = yield* portfolio(["invitations", "list", "--tenant", "nope", "--json"])
      expect(unknown.code).toBe(1)
      expect(unknown.stdout).toBe("")
      expect(JSON.parse(unknown.stderr)).toEqual(problem("NOT_FOUND", "not-found", "Not found", 404, "No tenant 'nope'."))
      const calls = state.callers.length
      const badSlug = yield* portfolio(["invitations", "list", "--tenant", "Not A Slug"])
      expect(badSlug.code).toBe(2)
      const missing = yield* portfolio(["invitations", "list"])
      expect(missing.code).toBe(2)
      expect(missing.stderr).toContain("--tenant")
      expect(state.callers.length).toBe(calls)
    }))
})
