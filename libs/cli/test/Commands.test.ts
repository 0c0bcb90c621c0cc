import { expect, layer } from "@effect/vitest"
import { Invitation } from "@portfolio/domain"
import { DateTime, Effect } from "effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { FakeAdmin, FakeAdminLive, FixedTime, PatId, PatToken } from "./support/FakeAdminApis.js"
import { portfolio, TestErrorsUrl, TestOperator } from "./support/RunCli.js"

const tenantIdOf = (slug: string) =>
  Effect.map(FakeAdmin, ({ state }) => {
    const entry = state.tenants.get(slug)
    if (entry === undefined) throw new Error(`no tenant ${slug} in the fake`)
    return entry.tenant.id
  })

const problem = (errorCode: string, slug: string, title: string, status: number, detail: string) => ({
  type: `${TestErrorsUrl}/${slug}`,
  title,
  status,
  detail,
  errorCode
})

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
          createdAt: "2026-07-01T10:00:00.000Z"
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
        "  admin userSub: sub-admin-beta"
      ])
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

  it.effect("seed demo defaults to 200 applications and 500 functions", () =>
    Effect.gen(function*() {
      yield* portfolio(["tenant", "create", "eta", "--admin-email", "admin@eta.example"])
      const id = yield* tenantIdOf("eta")
      const defaults = yield* portfolio(["seed", "demo", "--tenant", "eta", "--json"])
      expect(defaults).toEqual({
        code: 0,
        stdout: JSON.stringify({ tenant: "eta", tenantId: id, applications: 200, functions: 500, links: 1000 }),
        stderr: ""
      })
      const sized = yield* portfolio(["seed", "demo", "--tenant", "eta", "--applications", "3", "--functions", "4"])
      expect(sized.stdout).toBe("Seeded eta: 3 applications, 4 business functions, 8 links.")
    }))

  it.effect("seed demo of an unknown tenant exits 1 with NOT_FOUND", () =>
    Effect.gen(function*() {
      const run = yield* portfolio(["seed", "demo", "--tenant", "nope", "--json"])
      expect(run.code).toBe(1)
      expect(JSON.parse(run.stderr)).toEqual(problem("NOT_FOUND", "not-found", "Not found", 404, "No tenant 'nope'."))
    }))

  it.effect("app put reads the document on stdin and prints the application as the API answers it", () =>
    Effect.gen(function*() {
      const { state } = yield* FakeAdmin
      yield* portfolio(["tenant", "create", "theta", "--admin-email", "admin@theta.example"])
      const id = yield* tenantIdOf("theta")
      const document = { code: "CRM-01", name: "CRM", criticality: "MISSION_CRITICAL", regulations: "DORA,NIS2", licenseCost: 120000 }
      const run = yield* portfolio(["app", "put", "--tenant", "theta", "--json"], JSON.stringify(document))
      expect(run.code).toBe(0)
      expect(run.stderr).toBe("")
      expect(JSON.parse(run.stdout)).toEqual({
        code: "CRM-01",
        name: "CRM",
        description: null,
        parentCode: null,
        status: "ACTIVE",
        dataClassification: "INTERNAL",
        criticality: "MISSION_CRITICAL",
        rtoHours: null,
        rpoHours: null,
        regulations: "DORA,NIS2",
        roleAssignments: "",
        licenseCost: 120000,
        supportCost: null,
        infraCost: null,
        staffCost: null,
        annualCost: 120000,
        applicationVip: true,
        contactIT: null,
        contactMetier: null,
        createdAt: "2026-07-01T10:00:00.000Z",
        updatedAt: "2026-07-01T10:00:00.000Z"
      })
      expect(state.applications.has(`${id}/CRM-01`)).toBe(true)
    }))

  it.effect("app put of a refused application exits 1 with the service's problem on stderr", () =>
    Effect.gen(function*() {
      yield* portfolio(["tenant", "create", "iota", "--admin-email", "admin@iota.example"])
      const run = yield* portfolio(["app", "put", "--tenant", "iota"], JSON.stringify({ code: "ERP", name: "ERP", regulations: "DORA,SOX" }))
      expect(run.code).toBe(1)
      expect(run.stdout).toBe("")
      expect(JSON.parse(run.stderr)).toEqual(
        problem("INVALID_REGULATION", "invalid-regulation", "Invalid regulation", 400, "Unknown regulation token SOX.")
      )
    }))

  it.effect("app put refuses a misspelt field before calling anything", () =>
    Effect.gen(function*() {
      const { state } = yield* FakeAdmin
      const calls = state.callers.length
      const run = yield* portfolio(["app", "put", "--tenant", "iota"], JSON.stringify({ code: "ERP", name: "ERP", regulation: "DORA" }))
      expect(run.code).toBe(1)
      const reported = JSON.parse(run.stderr)
      expect(reported.errorCode).toBe("INVALID_REQUEST")
      expect(reported.detail).toContain("regulation")
      expect(reported.detail).toContain("is unexpected")
      expect(state.callers.length).toBe(calls)
    }))

  it.effect("app put reads --file, which must exist", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "portfolio-cli-"))
      const file = join(dir, "app.json")
      writeFileSync(file, JSON.stringify({ code: "HR-7", name: "Payroll", status: "PLANNED" }))
      const run = yield* portfolio(["app", "put", "--tenant", "iota", "--file", file])
      rmSync(dir, { recursive: true })
      expect(run.code).toBe(0)
      expect(run.stdout.split("\n")).toEqual([
        "Application HR-7 saved in iota.",
        "  name:                Payroll",
        "  status:              PLANNED",
        "  criticality:         NOMINAL",
        "  data classification: INTERNAL",
        "  regulations:         (none)"
      ])
      const missing = yield* portfolio(["app", "put", "--tenant", "iota", "--file", "/nonexistent/app.json"])
      expect(missing.code).toBe(2)
      expect(missing.stderr).toContain("/nonexistent/app.json")
    }))

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
