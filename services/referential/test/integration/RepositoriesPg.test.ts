import { describe, expect, layer } from "@effect/vitest"
import { SqlClient, Statement } from "@effect/sql"
import { Application, Conflict, NotFound, ReferentialStats } from "@portfolio/domain"
import { ApplicationRepository } from "../../src/ports/ApplicationRepository.js"
import { Effect, Exit, Layer, Schema, TestClock } from "effect"
import { getApplication, listApplicationChanges, listApplications } from "../../src/usecases/ApplicationQueries.js"
import { createFunction, deleteFunction, linkApplication, moveFunction } from "../../src/usecases/FunctionCommands.js"
import {
  getFunction,
  getFunctionTree,
  getFunctionTreePosi,
  getReferentialStats,
  listFunctionsByApplication,
  listFunctionsFlat,
  referentialRevision,
  searchFunctions
} from "../../src/usecases/FunctionQueries.js"
import { putApplication } from "../../src/usecases/PutApplication.js"
import { appInput, fnInput, tenantA, tenantB } from "../support/Fixtures.js"
import { FreshReferentialPg } from "../support/FreshDatabase.js"

/** Runs `effect` and counts the SQL statements it sends. */
const countingStatements = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    let statements = 0
    const result = yield* effect.pipe(
      Statement.withTransformer((statement) => Effect.sync(() => {
        statements += 1
        return statement
      }))
    )
    return { result, statements }
  })

const rowCount = (table: string, tenantId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ n: number }>`SELECT count(*) AS n FROM ${sql(`referential.${table}`)} WHERE tenant_id = ${tenantId}`,
      (rows) => rows[0]!.n
    ))

const encode = Schema.encodeSync(Application)

describe("referential on PostgreSQL", () => {
  layer(FreshReferentialPg, { timeout: 60_000 })((it) => {
    it.effect("stores every field of an application and reads it back as written", () =>
      Effect.gen(function*() {
        yield* TestClock.adjust("1234 millis")
        yield* putApplication(tenantA, "APP-CORE", appInput({ name: "Core" }), "ops")
        const input = appInput({
          name: "Payments Hub",
          description: "Card and SEPA payments",
          parentCode: "APP-CORE",
          status: "DEPRECATED",
          dataClassification: "RESTRICTED",
          criticality: "MISSION_CRITICAL",
          rtoHours: 0.25,
          rpoHours: 0,
          regulations: "PCI_DSS,DORA",
          roleAssignments: "TECH_LEAD:tara@x.example,TECH_LEAD:theo@x.example,SECURITY_OFFICER:sam@x.example,PRODUCT_OWNER:po@x.example",
          licenseCost: Number.MAX_SAFE_INTEGER - 10,
          supportCost: null,
          infraCost: 3,
          staffCost: 7
        })
        const written = yield* putApplication(tenantA, "APP-PAY", input, "ops")
        const expected = {
          code: "APP-PAY",
          name: "Payments Hub",
          description: "Card and SEPA payments",
          parentCode: "APP-CORE",
          status: "DEPRECATED",
          dataClassification: "RESTRICTED",
          criticality: "MISSION_CRITICAL",
          rtoHours: 0.25,
          rpoHours: 0,
          regulations: "DORA,PCI_DSS",
          roleAssignments: "TECH_LEAD:tara@x.example,TECH_LEAD:theo@x.example,SECURITY_OFFICER:sam@x.example,PRODUCT_OWNER:po@x.example",
          licenseCost: Number.MAX_SAFE_INTEGER - 10,
          supportCost: null,
          infraCost: 3,
          staffCost: 7,
          annualCost: Number.MAX_SAFE_INTEGER,
          applicationVip: true,
          contactIT: "tara@x.example",
          contactMetier: "po@x.example",
          createdAt: "1970-01-01T00:00:01.234Z",
          updatedAt: "1970-01-01T00:00:01.234Z"
        }
        expect(encode(written)).toEqual(expected)
        expect(encode(yield* getApplication(tenantA, "APP-PAY"))).toEqual(expected)
      }))

    it.effect("filters with AND, regulation as a member of the list, sorted bytewise by code", () =>
      Effect.gen(function*() {
        yield* putApplication(tenantA, "APP-9", appInput({ name: "9", regulations: "NIS2", dataClassification: "PUBLIC" }), "ops")
        yield* putApplication(tenantA, "APP-10", appInput({ name: "10", regulations: "DORA,NIS2,RGPD", criticality: "LOW" }), "ops")
        yield* putApplication(tenantA, "a-lower", appInput({ name: "lower", regulations: "RGPD", status: "PLANNED", criticality: "LOW" }), "ops")
        yield* putApplication(tenantB, "APP-B", appInput({ name: "B", regulations: "NIS2" }), "ops")
        const codes = (filters: Parameters<typeof listApplications>[1]) =>
          Effect.map(listApplications(tenantA, filters), (apps) => apps.map((app) => app.code))
        expect(yield* codes({})).toEqual(["APP-10", "APP-9", "APP-CORE", "APP-PAY", "a-lower"])
        expect(yield* codes({ regulation: "NIS2" })).toEqual(["APP-10", "APP-9"])
        expect(yield* codes({ regulation: "DORA" })).toEqual(["APP-10", "APP-PAY"])
        expect(yield* codes({ regulation: "RGPD", criticality: "LOW" })).toEqual(["APP-10", "a-lower"])
        expect(yield* codes({ regulation: "RGPD", criticality: "LOW", status: "PLANNED" })).toEqual(["a-lower"])
        expect(yield* codes({ data_class: "PUBLIC" })).toEqual(["APP-9"])
        expect(yield* codes({ data_class: "RESTRICTED", criticality: "MISSION_CRITICAL", status: "DEPRECATED" })).toEqual(["APP-PAY"])
        expect(yield* codes({ regulation: "HDS" })).toEqual([])
      }))

    it.effect("orders the change log by time then by write order, newest first", () =>
      Effect.gen(function*() {
        yield* putApplication(tenantA, "APP-LOG", appInput({ name: "Log", rtoHours: 1 }), "alice")
        yield* TestClock.adjust("1 second")
        yield* putApplication(tenantA, "APP-LOG", appInput({ name: "Log", rtoHours: 2, status: "RETIRED", infraCost: 5 }), "bob")
        const entries = yield* listApplicationChanges(tenantA, "APP-LOG", undefined)
        expect(entries.map(({ changedBy, field, newValue, oldValue }) => ({ field, oldValue, newValue, changedBy }))).toEqual([
          { field: "status", oldValue: "ACTIVE", newValue: "RETIRED", changedBy: "bob" },
          { field: "infraCost", oldValue: null, newValue: "5", changedBy: "bob" },
          { field: "rtoHours", oldValue: "1", newValue: "2", changedBy: "bob" },
          { field: "status", oldValue: null, newValue: "ACTIVE", changedBy: "alice" },
          { field: "dataClassification", oldValue: null, newValue: "INTERNAL", changedBy: "alice" },
          { field: "rtoHours", oldValue: null, newValue: "1", changedBy: "alice" },
          { field: "criticality", oldValue: null, newValue: "NOMINAL", changedBy: "alice" }
        ])
        expect(new Set(entries.slice(0, 3).map((entry) => entry.changedAt.epochMillis)).size).toBe(1)
        expect((yield* listApplicationChanges(tenantA, "APP-LOG", 2)).map((entry) => entry.field)).toEqual(["status", "infraCost"])
      }))

    it.effect("writes the row and its change log atomically: a failure after both leaves neither", () =>
      Effect.gen(function*() {
        const FailingAfterLog = Layer.effect(
          ApplicationRepository,
          Effect.map(ApplicationRepository, (inner) => ({
            ...inner,
            appendChanges: (tenantId: string, entries: Parameters<typeof inner.appendChanges>[1]) =>
              Effect.zipRight(inner.appendChanges(tenantId, entries), Effect.die("crash after the change log"))
          }))
        )
        const revision = yield* referentialRevision(tenantA)
        const rows = yield* rowCount("applications", tenantA)
        const entries = yield* rowCount("application_changes", tenantA)
        const regulations = yield* rowCount("application_regulations", tenantA)
        const failing = putApplication(tenantA, "APP-ATOMIC", appInput({ name: "Atomic", regulations: "DORA", roleAssignments: "ARCHITECT:a" }), "ops")
        const exit = yield* Effect.exit(Effect.provide(failing, FailingAfterLog.pipe(Layer.provide(Layer.succeedContext(yield* Effect.context<ApplicationRepository>())))))
        expect(Exit.isFailure(exit)).toBe(true)
        expect(yield* rowCount("applications", tenantA)).toBe(rows)
        expect(yield* rowCount("application_changes", tenantA)).toBe(entries)
        expect(yield* rowCount("application_regulations", tenantA)).toBe(regulations)
        expect(yield* referentialRevision(tenantA)).toBe(revision)
        expect(yield* Effect.flip(getApplication(tenantA, "APP-ATOMIC"))).toBeInstanceOf(NotFound)
        // The same write without the crash goes through: criticality, dataClassification, regulations, roleAssignments, status.
        yield* putApplication(tenantA, "APP-ATOMIC", appInput({ name: "Atomic", regulations: "DORA", roleAssignments: "ARCHITECT:a" }), "ops")
        expect(yield* rowCount("application_changes", tenantA)).toBe(entries + 5)
        expect(yield* referentialRevision(tenantA)).toBe(revision + 1)
      }))

    it.effect("serialises concurrent PUTs of one new code: one creation, no error", () =>
      Effect.gen(function*() {
        const results = yield* Effect.all(
          Array.from({ length: 8 }, (_, i) => putApplication(tenantA, "APP-RACE", appInput({ name: "Race", rtoHours: i }), `writer-${i}`)),
          { concurrency: "unbounded" }
        )
        expect(results.length).toBe(8)
        const creations = (yield* listApplicationChanges(tenantA, "APP-RACE", 200)).filter((entry) => entry.field === "status")
        expect(creations.length).toBe(1)
      }))

    it.effect("builds the tree, the flat list and the posi tree from one statement each", () =>
      Effect.gen(function*() {
        const fin = yield* createFunction(tenantA, fnInput({ code: "FIN", name: "Finance", description: "Money matters" }))
        const acc = yield* createFunction(tenantA, fnInput({ code: "FIN-ACC", name: "Accounting", parentId: fin.id }))
        const pay = yield* createFunction(tenantA, fnInput({ code: "FIN-PAY", name: "Payments", parentId: fin.id }))
        const sepa = yield* createFunction(tenantA, fnInput({ code: "FIN-PAY-SEPA", name: "SEPA", parentId: acc.id }))
        yield* moveFunction(tenantA, sepa.id, pay.id)
        yield* linkApplication(tenantA, sepa.id, "APP-PAY")
        yield* linkApplication(tenantA, sepa.id, "APP-10")
        yield* linkApplication(tenantA, acc.id, "APP-CORE")

        const tree = yield* countingStatements(getFunctionTree(tenantA))
        const flat = yield* countingStatements(listFunctionsFlat(tenantA))
        const posi = yield* countingStatements(getFunctionTreePosi(tenantA))
        expect([tree.statements, flat.statements, posi.statements]).toEqual([1, 1, 1])

        expect(tree.result.map((n) => [n.code, n.level, n.children.map((c) => [c.code, c.level, c.children.map((g) => [g.code, g.level, g.applicationCodes])])]))
          .toEqual([["FIN", 1, [["FIN-ACC", 2, []], ["FIN-PAY", 2, [["FIN-PAY-SEPA", 3, ["APP-10", "APP-PAY"]]]]]]])
        expect(flat.result.map((fn) => [fn.code, fn.path])).toEqual([
          ["FIN", ["FIN"]],
          ["FIN-ACC", ["FIN", "FIN-ACC"]],
          ["FIN-PAY", ["FIN", "FIN-PAY"]],
          ["FIN-PAY-SEPA", ["FIN", "FIN-PAY", "FIN-PAY-SEPA"]]
        ])
        expect(posi.result[0]!.children[1]!.children[0]!.applications.map((a) => ({ ...a }))).toEqual([
          { code: "APP-10", name: "10", parentCode: null, parentName: null, criticality: "LOW" },
          { code: "APP-PAY", name: "Payments Hub", parentCode: "APP-CORE", parentName: "Core", criticality: "MISSION_CRITICAL" }
        ])
        const one = yield* getFunction(tenantA, sepa.id)
        expect({ level: one.level, path: one.path, parentId: one.parentId, applicationCodes: one.applicationCodes })
          .toEqual({ level: 3, path: ["FIN", "FIN-PAY", "FIN-PAY-SEPA"], parentId: pay.id, applicationCodes: ["APP-10", "APP-PAY"] })
        expect((yield* listFunctionsByApplication(tenantA, "APP-PAY")).map((fn) => fn.path)).toEqual([["FIN", "FIN-PAY", "FIN-PAY-SEPA"]])
      }))

    it.effect("searches case-insensitively with wildcards taken literally", () =>
      Effect.gen(function*() {
        yield* createFunction(tenantA, fnInput({ code: "W_1", name: "underscore" }))
        yield* createFunction(tenantA, fnInput({ code: "W%2", name: "percent" }))
        yield* createFunction(tenantA, fnInput({ code: "W\\3", name: "backslash" }))
        yield* createFunction(tenantA, fnInput({ code: "WX4", name: "plain", description: "Mentions SEPA too" }))
        const codes = (q: string) => Effect.map(searchFunctions(tenantA, q), (fns) => fns.map((fn) => fn.code))
        expect(yield* codes("_")).toEqual(["W_1"])
        expect(yield* codes("%")).toEqual(["W%2"])
        expect(yield* codes("\\")).toEqual(["W\\3"])
        expect(yield* codes("w")).toEqual(["W%2", "WX4", "W\\3", "W_1"])
        expect(yield* codes("sepa")).toEqual(["FIN-PAY-SEPA", "WX4"])
        expect(yield* codes("MONEY")).toEqual(["FIN"])
        expect((yield* searchFunctions(tenantA, "sepa"))[0]!.path).toEqual(["FIN", "FIN-PAY", "FIN-PAY-SEPA"])
        expect(yield* Effect.map(searchFunctions(tenantB, "fin"), (fns) => fns.length)).toBe(0)
      }))

    it.effect("refuses cycles and deleting a parent; a deleted leaf takes its links along", () =>
      Effect.gen(function*() {
        const [fin] = yield* searchFunctions(tenantA, "Finance")
        const [sepa] = yield* searchFunctions(tenantA, "FIN-PAY-SEPA")
        expect(yield* Effect.flip(moveFunction(tenantA, fin!.id, sepa!.id))).toBeInstanceOf(Conflict)
        expect(yield* Effect.flip(deleteFunction(tenantA, fin!.id))).toBeInstanceOf(Conflict)
        const links = yield* rowCount("function_applications", tenantA)
        yield* deleteFunction(tenantA, sepa!.id)
        expect(yield* rowCount("function_applications", tenantA)).toBe(links - 2)
        expect(yield* listFunctionsByApplication(tenantA, "APP-PAY")).toEqual([])
        expect(yield* Effect.flip(getFunction(tenantB, fin!.id))).toBeInstanceOf(NotFound)
      }))

    it.effect("computes the statistics in SQL", () =>
      Effect.gen(function*() {
        yield* putApplication(tenantB, "APP-B2", appInput({ name: "B2", criticality: "IMPORTANT", status: "RETIRED" }), "ops")
        const b = yield* createFunction(tenantB, fnInput({ code: "B-OPS", name: "Ops" }))
        const bChild = yield* createFunction(tenantB, fnInput({ code: "B-OPS-1", name: "Ops 1", parentId: b.id }))
        yield* createFunction(tenantB, fnInput({ code: "B-OPS-1-a", name: "Ops 1 a", parentId: bChild.id }))
        yield* linkApplication(tenantB, bChild.id, "APP-B")
        yield* linkApplication(tenantB, b.id, "APP-B")
        expect(yield* getReferentialStats(tenantB)).toEqual(
          new ReferentialStats({
            functionCount: 3,
            rootFunctionCount: 1,
            maxDepth: 3,
            functionsWithoutApplication: 1,
            applicationCount: 2,
            applicationsWithoutFunction: 1,
            linkCount: 2,
            averageApplicationsPerFunction: 0.67,
            applicationsByCriticality: { MISSION_CRITICAL: 0, IMPORTANT: 1, NOMINAL: 1, LOW: 0 },
            applicationsByDataClassification: { PUBLIC: 0, INTERNAL: 2, CONFIDENTIAL: 0, RESTRICTED: 0 },
            applicationsByStatus: { ACTIVE: 1, PLANNED: 0, DEPRECATED: 0, RETIRED: 1 }
          })
        )
        const empty = yield* getReferentialStats("33333333-3333-4333-8333-333333333333")
        expect({ ...empty }).toMatchObject({ functionCount: 0, maxDepth: 0, applicationCount: 0, averageApplicationsPerFunction: 0 })
      }))
  })
})
