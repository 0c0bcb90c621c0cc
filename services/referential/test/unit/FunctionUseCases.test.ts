import { describe, expect, layer } from "@effect/vitest"
import { walkedFlat, walkedPosi, walkedTree } from "../support/Forests.js"
import { type BusinessFunction, Conflict, NotFound, ReferentialStats } from "@portfolio/domain"
import { Effect } from "effect"
import {
  createFunction,
  deleteFunction,
  linkApplication,
  moveFunction,
  unlinkApplication,
  updateFunction
} from "../../src/usecases/FunctionCommands.js"
import { getFunction, getReferentialStats, listFunctionsByApplication, referentialRevisions, searchFunctions } from "../../src/usecases/FunctionQueries.js"
import { putApplication } from "../../src/usecases/PutApplication.js"
import { appInput, fnInput, tenantA, tenantB } from "../support/Fixtures.js"
import { MemoryLayer } from "../support/Memory.js"

const unknownId = "99999999-9999-4999-8999-999999999999"
const codesOf = (fns: ReadonlyArray<BusinessFunction>) => fns.map((fn) => fn.code)

describe("business function commands", () => {
  layer(MemoryLayer)((it) => {
    it.effect("creates roots and children, with level and path", () =>
      Effect.gen(function*() {
        const fin = yield* createFunction(tenantA, fnInput({ code: "FIN", name: "Finance", description: "Money" }))
        const acc = yield* createFunction(tenantA, fnInput({ code: "FIN-ACC", name: "Accounting", parentId: fin.id }))
        expect({ level: acc.level, path: acc.path, parentId: acc.parentId }).toEqual({ level: 2, path: ["FIN", "FIN-ACC"], parentId: fin.id })
        expect(yield* getFunction(tenantA, acc.id)).toEqual(acc)
        expect(fin.description).toBe("Money")
        expect(fin.applicationCodes).toEqual([])
      }))

    it.effect("refuses a duplicate code in the tenant, not across tenants", () =>
      Effect.gen(function*() {
        expect(yield* Effect.flip(createFunction(tenantA, fnInput({ code: "FIN", name: "again" })))).toEqual(
          new Conflict({ detail: "A business function with code 'FIN' already exists." })
        )
        const other = yield* createFunction(tenantB, fnInput({ code: "FIN", name: "B's finance" }))
        expect(other.code).toBe("FIN")
      }))

    it.effect("refuses an unknown parent or one of another tenant", () =>
      Effect.gen(function*() {
        expect(yield* Effect.flip(createFunction(tenantA, fnInput({ code: "X", name: "x", parentId: unknownId })))).toEqual(
          new NotFound({ detail: `Parent business function '${unknownId}' does not exist.` })
        )
        const bFin = (yield* searchFunctions(tenantB, "FIN"))[0]!
        expect(yield* Effect.flip(createFunction(tenantA, fnInput({ code: "X", name: "x", parentId: bFin.id })))).toBeInstanceOf(NotFound)
        expect(yield* Effect.flip(getFunction(tenantA, bFin.id))).toEqual(new NotFound({ detail: `No business function with id '${bFin.id}'.` }))
      }))

    it.effect("moves under another function, refusing itself and its descendants", () =>
      Effect.gen(function*() {
        const [fin] = yield* searchFunctions(tenantA, "Finance")
        const pay = yield* createFunction(tenantA, fnInput({ code: "FIN-PAY", name: "Payments", parentId: fin!.id }))
        const sepa = yield* createFunction(tenantA, fnInput({ code: "SEPA", name: "SEPA" }))
        const moved = yield* moveFunction(tenantA, sepa.id, pay.id)
        expect({ path: moved.path, level: moved.level }).toEqual({ path: ["FIN", "FIN-PAY", "SEPA"], level: 3 })
        expect(yield* Effect.flip(moveFunction(tenantA, fin!.id, sepa.id))).toEqual(
          new Conflict({ detail: `Business function '${fin!.id}' cannot move under its own descendant '${sepa.id}'.` })
        )
        expect(yield* Effect.flip(moveFunction(tenantA, fin!.id, fin!.id))).toEqual(
          new Conflict({ detail: `Business function '${fin!.id}' cannot be its own parent.` })
        )
        expect(yield* Effect.flip(moveFunction(tenantA, unknownId, null))).toBeInstanceOf(NotFound)
        expect((yield* moveFunction(tenantA, sepa.id, null)).path).toEqual(["SEPA"])
        yield* moveFunction(tenantA, sepa.id, pay.id)
      }))

    it.effect("updates code, name, description and parent; absent keeps, null clears", () =>
      Effect.gen(function*() {
        const [sepa] = yield* searchFunctions(tenantA, "SEPA")
        const renamed = yield* updateFunction(tenantA, sepa!.id, fnInput({ code: "FIN-PAY-SEPA", name: "SEPA transfers", description: "d" }))
        expect({ code: renamed.code, name: renamed.name, description: renamed.description, path: renamed.path })
          .toEqual({ code: "FIN-PAY-SEPA", name: "SEPA transfers", description: "d", path: ["FIN", "FIN-PAY", "FIN-PAY-SEPA"] })
        const kept = yield* updateFunction(tenantA, sepa!.id, fnInput({ code: "FIN-PAY-SEPA", name: "SEPA transfers" }))
        expect(kept.description).toBe("d")
        const cleared = yield* updateFunction(tenantA, sepa!.id, fnInput({ code: "FIN-PAY-SEPA", name: "SEPA transfers", description: null }))
        expect(cleared.description).toBe(null)
        expect(yield* Effect.flip(updateFunction(tenantA, sepa!.id, fnInput({ code: "FIN", name: "clash" })))).toBeInstanceOf(Conflict)
        const [fin] = yield* searchFunctions(tenantA, "Finance")
        expect(yield* Effect.flip(updateFunction(tenantA, fin!.id, fnInput({ code: "FIN", name: "Finance", parentId: sepa!.id })))).toBeInstanceOf(Conflict)
      }))

    it.effect("links idempotently, unlinks, and needs both ends to exist", () =>
      Effect.gen(function*() {
        yield* putApplication(tenantA, "APP-1", appInput({ name: "One", criticality: "IMPORTANT" }), "ops")
        yield* putApplication(tenantA, "APP-2", appInput({ name: "Two", parentCode: "APP-1" }), "ops")
        const [sepa] = yield* searchFunctions(tenantA, "SEPA")
        yield* linkApplication(tenantA, sepa!.id, "APP-2")
        const linked = yield* referentialRevisions(tenantA)
        yield* linkApplication(tenantA, sepa!.id, "APP-2")
        // A link that exists is no write: no revision moves, no cached answer is rebuilt.
        expect(yield* referentialRevisions(tenantA)).toEqual(linked)
        yield* linkApplication(tenantA, sepa!.id, "APP-1")
        expect((yield* getFunction(tenantA, sepa!.id)).applicationCodes).toEqual(["APP-1", "APP-2"])
        expect(codesOf(yield* listFunctionsByApplication(tenantA, "APP-2"))).toEqual(["FIN-PAY-SEPA"])
        yield* unlinkApplication(tenantA, sepa!.id, "APP-1")
        const unlinked = yield* referentialRevisions(tenantA)
        expect(unlinked.functions).toBeGreaterThan(linked.functions)
        yield* unlinkApplication(tenantA, sepa!.id, "APP-1")
        expect(yield* referentialRevisions(tenantA)).toEqual(unlinked)
        expect((yield* getFunction(tenantA, sepa!.id)).applicationCodes).toEqual(["APP-2"])
        expect(yield* Effect.flip(linkApplication(tenantA, sepa!.id, "APP-NOPE"))).toEqual(new NotFound({ detail: "No application with code 'APP-NOPE'." }))
        expect(yield* Effect.flip(linkApplication(tenantA, unknownId, "APP-1"))).toBeInstanceOf(NotFound)
        expect(yield* Effect.flip(unlinkApplication(tenantB, sepa!.id, "APP-1"))).toBeInstanceOf(NotFound)
        expect(yield* Effect.flip(listFunctionsByApplication(tenantA, "APP-NOPE"))).toBeInstanceOf(NotFound)
        expect(yield* listFunctionsByApplication(tenantA, "APP-1")).toEqual([])
      }))

    it.effect("answers the tree, the flat list and the posi tree", () =>
      Effect.gen(function*() {
        yield* createFunction(tenantA, fnInput({ code: "HR", name: "Human resources" }))
        const tree = yield* walkedTree(tenantA)
        expect(tree.map((n) => [n.code, n.children.map((c) => [c.code, c.children.map((g) => g.code)])])).toEqual([
          ["FIN", [["FIN-ACC", []], ["FIN-PAY", ["FIN-PAY-SEPA"]]]],
          ["HR", []]
        ])
        expect(codesOf(yield* walkedFlat(tenantA))).toEqual(["FIN", "FIN-ACC", "FIN-PAY", "FIN-PAY-SEPA", "HR"])
        const posi = yield* walkedPosi(tenantA)
        expect(posi[0]!.children[1]!.children[0]!.applications.map((a) => ({ ...a }))).toEqual([
          { code: "APP-2", name: "Two", parentCode: "APP-1", parentName: "One", criticality: "NOMINAL" }
        ])
      }))

    it.effect("searches code, name and description case-insensitively, wildcards literal", () =>
      Effect.gen(function*() {
        expect(codesOf(yield* searchFunctions(tenantA, "fin-pay"))).toEqual(["FIN-PAY", "FIN-PAY-SEPA"])
        expect(codesOf(yield* searchFunctions(tenantA, "HUMAN"))).toEqual(["HR"])
        expect(codesOf(yield* searchFunctions(tenantA, "%"))).toEqual([])
        expect(codesOf(yield* searchFunctions(tenantB, "pay"))).toEqual([])
      }))

    it.effect("counts the referential", () =>
      Effect.gen(function*() {
        expect(yield* getReferentialStats(tenantA)).toEqual(
          new ReferentialStats({
            functionCount: 5,
            rootFunctionCount: 2,
            maxDepth: 3,
            functionsWithoutApplication: 4,
            applicationCount: 2,
            applicationsWithoutFunction: 1,
            linkCount: 1,
            averageApplicationsPerFunction: 0.2,
            applicationsByCriticality: { MISSION_CRITICAL: 0, IMPORTANT: 1, NOMINAL: 1, LOW: 0 },
            applicationsByDataClassification: { PUBLIC: 0, INTERNAL: 2, CONFIDENTIAL: 0, RESTRICTED: 0 },
            applicationsByStatus: { ACTIVE: 2, PLANNED: 0, DEPRECATED: 0, RETIRED: 0 }
          })
        )
        expect((yield* getReferentialStats("33333333-3333-4333-8333-333333333333")).averageApplicationsPerFunction).toBe(0)
      }))

    it.effect("deletes only leaves, with their links; each write moves the functions' revision only, a refused one none", () =>
      Effect.gen(function*() {
        const [pay] = yield* searchFunctions(tenantA, "Payments")
        const [sepa] = yield* searchFunctions(tenantA, "SEPA")
        const before = yield* referentialRevisions(tenantA)
        expect(yield* Effect.flip(deleteFunction(tenantA, pay!.id))).toEqual(
          new Conflict({ detail: `Business function '${pay!.id}' has children; move or delete them first.` })
        )
        expect(yield* referentialRevisions(tenantA)).toEqual(before)
        yield* deleteFunction(tenantA, sepa!.id)
        const after = yield* referentialRevisions(tenantA)
        expect(after.applications).toBe(before.applications)
        expect(after.functions).toBeGreaterThan(before.functions)
        expect(yield* Effect.flip(getFunction(tenantA, sepa!.id))).toBeInstanceOf(NotFound)
        expect(yield* listFunctionsByApplication(tenantA, "APP-2")).toEqual([])
        expect(yield* Effect.flip(deleteFunction(tenantA, sepa!.id))).toBeInstanceOf(NotFound)
        yield* deleteFunction(tenantA, pay!.id)
      }))
  })
})
