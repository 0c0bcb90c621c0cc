import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { FakeAdmin, FakeAdminLive, tenantIdOf } from "./support/FakeAdminApis.js"
import { portfolio, problem } from "./support/RunCli.js"

layer(FakeAdminLive)("portfolio against the admin APIs", (it) => {
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
})
