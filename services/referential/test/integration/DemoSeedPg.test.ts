import { describe, expect, layer } from "@effect/vitest"
import { walkedFlat, walkedPosi, walkedTree } from "../support/Forests.js"
import { SqlClient, Statement } from "effect/sql"
import { Conflict, type FunctionTreeNode } from "@portfolio/domain"
import { Effect, Stream } from "effect"
import { getApplication } from "../../src/usecases/ApplicationQueries.js"
import { listApplications } from "../support/ApplicationLists.js"
import { getFunction, getReferentialStats } from "../../src/usecases/FunctionQueries.js"
import { ApplicationRepository, type HeldLinked } from "../../src/ports/ApplicationRepository.js"
import { FunctionRepository } from "../../src/ports/FunctionRepository.js"
import { seedDemo } from "../../src/usecases/SeedDemo.js"
import { tenantA, tenantB } from "../support/Fixtures.js"
import { FreshReferentialPg } from "../support/FreshDatabase.js"
import { capturing, planOf } from "../support/Plans.js"

const countingStatements = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    let statements = 0
    const result = yield* effect.pipe(Effect.provideService(Statement.CurrentTransformer, (statement) => Effect.sync(() => {
      statements += 1
      return statement
    })))
    return { result, statements }
  })

const countNodes = (nodes: ReadonlyArray<FunctionTreeNode>): number => nodes.reduce((n, node) => n + 1 + countNodes(node.children), 0)

describe("demo seed on PostgreSQL", () => {
  layer(FreshReferentialPg, { timeout: 120_000 })((it) => {
    it.effect("inserts 2,000 applications and 5,000 functions in a handful of multi-row statements", () =>
      Effect.gen(function*() {
        const seeded = yield* countingStatements(seedDemo(tenantA, { applications: 2_000, functions: 5_000, maxDepth: 6, seed: 42 }, "ops"))
        expect({ applications: seeded.result.applications, functions: seeded.result.functions }).toEqual({ applications: 2_000, functions: 5_000 })
        expect(seeded.statements).toBeLessThanOrEqual(30)

        const stats = yield* getReferentialStats(tenantA)
        expect({ functionCount: stats.functionCount, applicationCount: stats.applicationCount, maxDepth: stats.maxDepth, linkCount: stats.linkCount })
          .toEqual({ functionCount: 5_000, applicationCount: 2_000, maxDepth: 6, linkCount: seeded.result.links })
        expect(stats.applicationsWithoutFunction).toBeGreaterThanOrEqual(200)

        const sql = yield* SqlClient.SqlClient
        const [counts] = yield* sql<{ entries: number; legacy: number; parents: number }>`
          SELECT
            (SELECT count(*) FROM referential.application_changes WHERE tenant_id = ${tenantA}) AS entries,
            (SELECT count(*) FROM referential.applications WHERE tenant_id = ${tenantA} AND legacy_annual_cost IS NOT NULL) AS legacy,
            (SELECT count(*) FROM referential.applications WHERE tenant_id = ${tenantA} AND parent_code IS NOT NULL) AS parents`
        expect(counts!.entries).toBeGreaterThanOrEqual(2_000 * 4)
        expect(counts!.legacy).toBeGreaterThan(0)
        expect(counts!.parents).toBeGreaterThan(0)
        // The planner knows the tables' new sizes at once (ANALYZE sets them; an insert does not).
        const planned = yield* sql<{ relname: string; reltuples: number }>`
          SELECT relname, reltuples FROM pg_class
          WHERE relnamespace = 'referential'::regnamespace AND relname IN ('applications', 'functions', 'function_applications')
          ORDER BY relname`
        expect(planned.map((table) => [table.relname, table.reltuples >= { applications: 2_000, functions: 5_000, function_applications: seeded.result.links }[table.relname]!]))
          .toEqual([["applications", true], ["function_applications", true], ["functions", true]])
      }))

    // A walk: its snapshot and its settings (two statements), the cursor declared once, then
    // fetched 250 functions at a time until a fetch comes back short (21 for 5,000).
    const WalkStatements = 2 + 1 + 21

    it.effect("answers the 5,000-node tree and flat list from one walk of the forest each", () =>
      Effect.gen(function*() {
        const tree = yield* countingStatements(walkedTree(tenantA))
        expect({ statements: tree.statements, nodes: countNodes(tree.result) }).toEqual({ statements: WalkStatements, nodes: 5_000 })
        const flat = yield* countingStatements(walkedFlat(tenantA))
        expect({ statements: flat.statements, functions: flat.result.length, deepest: Math.max(...flat.result.map((fn) => fn.level)) })
          .toEqual({ statements: WalkStatements, functions: 5_000, deepest: 6 })
        expect((yield* listApplications(tenantA, { regulation: "HDS" })).every((app) => app.regulations.split(",").includes("HDS"))).toBe(true)
      }))

    it.effect("answers the posi tree from a walk and the applications read in a snapshot of their own, 250 at a time; one function and one application from one statement each", () =>
      Effect.gen(function*() {
        const posi = yield* countingStatements(walkedPosi(tenantA))
        // The applications' snapshot, their write sequence, their cursor declared, and 9 fetches for 2,000.
        expect({ statements: posi.statements, roots: posi.result.length > 0 }).toEqual({ statements: WalkStatements + 1 + 1 + 1 + 9, roots: true })
        const one = yield* countingStatements(getFunction(tenantA, posi.result[0]!.children[0]!.id))
        expect({ statements: one.statements, level: one.result.level }).toEqual({ statements: 1, level: 2 })
        const application = yield* countingStatements(getApplication(tenantA, "APP-0042"))
        expect({ statements: application.statements, code: application.result.code }).toEqual({ statements: 1, code: "APP-0042" })
      }))

    it.effect("numbers every write of an application, whoever writes it: posi's applications after one is written are it and its children, read by index", () =>
      Effect.gen(function*() {
        const applications = yield* ApplicationRepository
        const sql = yield* SqlClient.SqlClient
        const listed = (holding: HeldLinked | undefined) => Effect.map(Stream.runCollect(applications.listLinkedChanged(tenantA, [], holding)), (all) => [...all])
        const cold = yield* listed(undefined)
        const writeSeq = cold[0]?._tag === "WriteSeq" ? cold[0].writeSeq : expect.unreachable("the write sequence first")
        const versions = new Map(cold.flatMap((batch) => batch._tag === "Linked" ? batch.applications.map(({ application, version }) => [application.code, version] as const) : []))
        expect(versions.size).toBe(2_000)
        const [parent] = yield* sql<{ readonly code: string; readonly children: ReadonlyArray<string> }>`
          SELECT p.parent_code AS code, array_agg(p.code ORDER BY p.code) AS children FROM referential.applications p
          WHERE p.tenant_id = ${tenantA} AND p.parent_code IS NOT NULL GROUP BY p.parent_code ORDER BY count(*) DESC, p.parent_code LIMIT 1`
        // As a previous version, or anything else that writes the row, would: the trigger numbers it.
        yield* sql`UPDATE referential.applications SET name = 'Renamed by another writer', revision = revision + 1 WHERE tenant_id = ${tenantA} AND code = ${parent!.code}`
        const { result, statements } = yield* capturing(listed({ writeSeq, held: (code, version) => versions.get(code) === version }))
        const codes = (tag: "Versions" | "Linked") =>
          result.flatMap((batch) => batch._tag !== tag ? [] : batch._tag === "Versions" ? batch.versions.map(({ code }) => code) : batch.applications.map(({ application }) => application.code)).sort()
        const moved = [parent!.code, ...parent!.children].sort()
        expect({ versions: codes("Versions"), linked: codes("Linked") }).toEqual({ versions: moved, linked: moved })
        expect(result.flatMap((batch) => batch._tag === "Linked" ? batch.applications : []).filter(({ application }) => application.parentCode === parent!.code).map(({ application }) => application.parentName))
          .toEqual(parent!.children.map(() => "Renamed by another writer"))
        // The plan PostgreSQL makes for the versions (not run again, no timing): the write sequence's
        // index and the parents', no reading of the tenant's 2,000 rows.
        const all = yield* planOf(statements.find(([text]) => text.includes("WITH written AS"))!)
        expect(all.filter((node) => node["Node Type"] === "Seq Scan")).toEqual([])
        expect(new Set(all.flatMap((node) => node["Index Name"] ?? []))).toContain("applications_write_seq")
      }))

    it.effect("refuses to seed a tenant that has applications, and leaves it as it was", () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(seedDemo(tenantA, { applications: 1, functions: 1, maxDepth: 1, seed: 1 }, "ops"))
        expect(error).toEqual(
          new Conflict({
            detail: `Tenant ${tenantA} already has 2000 applications and 5000 business functions; the demo seed only fills an empty referential.`
          })
        )
        expect((yield* getReferentialStats(tenantA)).functionCount).toBe(5_000)
      }))

    it.effect("leaves nothing when its last chunk fails, though earlier chunks were written", () =>
      Effect.gen(function*() {
        const functions = yield* FunctionRepository
        let chunks = 0
        const failing = FunctionRepository.of({
          ...functions,
          insertLinks: (tenantId, links) => (++chunks < 2 ? functions.insertLinks(tenantId, links) : Effect.die("links refused"))
        })
        const seeded = seedDemo(tenantB, { applications: 3_000, functions: 15_000, maxDepth: 6, seed: 1 }, "ops")
        expect(yield* Effect.exit(Effect.provideService(seeded, FunctionRepository, failing))).toMatchObject({ _tag: "Failure" })
        expect(chunks).toBe(2)
        const sql = yield* SqlClient.SqlClient
        const [left] = yield* sql<{ rows: number }>`
          SELECT
            (SELECT count(*) FROM referential.applications WHERE tenant_id = ${tenantB}) +
            (SELECT count(*) FROM referential.application_changes WHERE tenant_id = ${tenantB}) +
            (SELECT count(*) FROM referential.functions WHERE tenant_id = ${tenantB}) +
            (SELECT count(*) FROM referential.function_applications WHERE tenant_id = ${tenantB}) +
            (SELECT count(*) FROM referential.outbox WHERE payload->>'tenantId' = ${tenantB}) AS rows`
        expect(Number(left!.rows)).toBe(0)
      }))
  })
})
