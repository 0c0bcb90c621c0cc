import { describe, expect, layer } from "@effect/vitest"
import { walkedFlat, walkedPosi, walkedTree } from "../support/Forests.js"
import { Conflict, NotFound, ReferentialStats } from "@portfolio/domain"
import { Effect, Option, Stream } from "effect"
import { ApplicationRepository } from "../../src/ports/ApplicationRepository.js"
import { FunctionRepository } from "../../src/ports/FunctionRepository.js"
import { createFunction, deleteFunction, linkApplication, moveFunction } from "../../src/usecases/FunctionCommands.js"
import { getFunction, getReferentialStats, listFunctionsByApplication, listFunctionsByApplicationPage, listFunctionsFlatPage, searchFunctions, searchFunctionsPage } from "../../src/usecases/FunctionQueries.js"
import { putApplication } from "../../src/usecases/PutApplication.js"
import { adapters, StoredRows } from "../support/Adapters.js"
import { allPages } from "../support/Pages.js"
import { appInput, applicationRecord, fnInput, tenantA, tenantB } from "../support/Fixtures.js"

const tenantC = "44444444-4444-4444-8444-444444444444"

const applicationsOfBothTenants = Effect.gen(function*() {
  yield* putApplication(tenantA, "APP-CORE", appInput({ name: "Core" }), "ops")
  yield* putApplication(tenantA, "APP-PAY", appInput({ name: "Payments Hub", parentCode: "APP-CORE", criticality: "MISSION_CRITICAL" }), "ops")
  yield* putApplication(tenantA, "APP-10", appInput({ name: "10", criticality: "LOW" }), "ops")
  yield* putApplication(tenantB, "APP-B", appInput({ name: "B" }), "ops")
})

describe.each(adapters)("FunctionRepository $name", ({ layer: adapter }) => {
  layer(adapter, { timeout: 60_000 })((it) => {
    it.effect("builds the tree, the flat list and the posi tree", () =>
      Effect.gen(function*() {
        yield* applicationsOfBothTenants
        const fin = yield* createFunction(tenantA, fnInput({ code: "FIN", name: "Finance", description: "Money matters" }))
        const acc = yield* createFunction(tenantA, fnInput({ code: "FIN-ACC", name: "Accounting", parentId: fin.id }))
        const pay = yield* createFunction(tenantA, fnInput({ code: "FIN-PAY", name: "Payments", parentId: fin.id }))
        const sepa = yield* createFunction(tenantA, fnInput({ code: "FIN-PAY-SEPA", name: "SEPA", parentId: acc.id }))
        yield* moveFunction(tenantA, sepa.id, pay.id)
        yield* linkApplication(tenantA, sepa.id, "APP-PAY")
        yield* linkApplication(tenantA, sepa.id, "APP-10")
        yield* linkApplication(tenantA, acc.id, "APP-CORE")

        const tree = yield* walkedTree(tenantA)
        const flat = yield* walkedFlat(tenantA)
        const posi = yield* walkedPosi(tenantA)
        expect(tree.map((n) => [n.code, n.level, n.children.map((c) => [c.code, c.level, c.children.map((g) => [g.code, g.level, g.applicationCodes])])]))
          .toEqual([["FIN", 1, [["FIN-ACC", 2, []], ["FIN-PAY", 2, [["FIN-PAY-SEPA", 3, ["APP-10", "APP-PAY"]]]]]]])
        expect(flat.map((fn) => [fn.code, fn.path])).toEqual([
          ["FIN", ["FIN"]],
          ["FIN-ACC", ["FIN", "FIN-ACC"]],
          ["FIN-PAY", ["FIN", "FIN-PAY"]],
          ["FIN-PAY-SEPA", ["FIN", "FIN-PAY", "FIN-PAY-SEPA"]]
        ])
        expect(posi[0]!.children[1]!.children[0]!.applications.map((a) => ({ ...a }))).toEqual([
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

    it.effect("takes wildcards literally in terms of three characters and more, and finds terms of one or two", () =>
      Effect.gen(function*() {
        // Terms of three characters and more go through PostgreSQL's trigram indexes, shorter ones do not.
        const tenantE = "77777777-7777-4777-8777-777777777777"
        yield* createFunction(tenantE, fnInput({ code: "Q_12", name: "Under score" }))
        yield* createFunction(tenantE, fnInput({ code: "Q%34", name: "Per cent" }))
        yield* createFunction(tenantE, fnInput({ code: "Q\\56", name: "Back slash" }))
        yield* createFunction(tenantE, fnInput({ code: "QX12", name: "Plain", description: "Mentions 50% off" }))
        yield* createFunction(tenantE, fnInput({ code: "QA", name: "Pay_roll" }))
        const codes = (q: string) => Effect.map(searchFunctions(tenantE, q), (fns) => fns.map((fn) => fn.code))
        expect(yield* codes("q_1")).toEqual(["Q_12"])
        expect(yield* codes("q%3")).toEqual(["Q%34"])
        expect(yield* codes("q\\5")).toEqual(["Q\\56"])
        expect(yield* codes("PAY_ROLL")).toEqual(["QA"])
        expect(yield* codes("y_r")).toEqual(["QA"])
        expect(yield* codes("% o")).toEqual(["QX12"])
        expect(yield* codes("0%")).toEqual(["QX12"])
        expect(yield* codes("12")).toEqual(["QX12", "Q_12"])
        expect(yield* codes("x1")).toEqual(["QX12"])
        expect(yield* codes("q")).toEqual(["Q%34", "QA", "QX12", "Q\\56", "Q_12"])
        expect(yield* codes("q_x")).toEqual([])
        expect((yield* searchFunctionsPage(tenantE, "q", { limit: 2 })).items.map((fn) => fn.code)).toEqual(["Q%34", "QA"])
      }))

    it.effect("refuses cycles and deleting a parent; a deleted leaf takes its links along", () =>
      Effect.gen(function*() {
        const stored = yield* StoredRows
        const [fin] = yield* searchFunctions(tenantA, "Finance")
        const [sepa] = yield* searchFunctions(tenantA, "FIN-PAY-SEPA")
        expect(yield* Effect.flip(moveFunction(tenantA, fin!.id, sepa!.id))).toBeInstanceOf(Conflict)
        expect(yield* Effect.flip(deleteFunction(tenantA, fin!.id))).toBeInstanceOf(Conflict)
        const links = (yield* stored(tenantA)).function_applications
        yield* deleteFunction(tenantA, sepa!.id)
        expect((yield* stored(tenantA)).function_applications).toBe(links - 2)
        expect(yield* listFunctionsByApplication(tenantA, "APP-PAY")).toEqual([])
        expect(yield* Effect.flip(getFunction(tenantB, fin!.id))).toBeInstanceOf(NotFound)
      }))

    it.effect("computes the statistics", () =>
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

    it.effect("keeps the application breakdowns true through updates and bulk inserts", () =>
      Effect.gen(function*() {
        const tenant = "55555555-5555-4555-8555-555555555555"
        const breakdowns = Effect.map(getReferentialStats(tenant), (stats) => ({
          applicationCount: stats.applicationCount,
          criticality: stats.applicationsByCriticality,
          classification: stats.applicationsByDataClassification,
          status: stats.applicationsByStatus
        }))
        yield* putApplication(tenant, "APP-1", appInput({ name: "One", criticality: "IMPORTANT", status: "PLANNED" }), "ops")
        yield* putApplication(tenant, "APP-2", appInput({ name: "Two" }), "ops")
        // An update moves each changed value from one count to the other.
        yield* putApplication(tenant, "APP-1", appInput({ name: "One", criticality: "LOW", status: "RETIRED", dataClassification: "RESTRICTED" }), "ops")
        // One that changes none of the counted fields moves nothing.
        yield* putApplication(tenant, "APP-2", appInput({ name: "Two renamed", description: "Still nominal" }), "ops")
        expect(yield* breakdowns).toEqual({
          applicationCount: 2,
          criticality: { MISSION_CRITICAL: 0, IMPORTANT: 0, NOMINAL: 1, LOW: 1 },
          classification: { PUBLIC: 0, INTERNAL: 1, CONFIDENTIAL: 0, RESTRICTED: 1 },
          status: { ACTIVE: 1, PLANNED: 0, DEPRECATED: 0, RETIRED: 1 }
        })
        // Many rows in one statement (the demo seed's path).
        const many = Array.from({ length: 250 }, (_, i) =>
          applicationRecord(`BULK-${i}`, { criticality: i % 2 === 0 ? "MISSION_CRITICAL" : "LOW", dataClassification: i % 5 === 0 ? "PUBLIC" : "INTERNAL" })
        )
        yield* (yield* ApplicationRepository).insertMany(tenant, many)
        expect(yield* breakdowns).toEqual({
          applicationCount: 252,
          criticality: { MISSION_CRITICAL: 125, IMPORTANT: 0, NOMINAL: 1, LOW: 126 },
          classification: { PUBLIC: 50, INTERNAL: 201, CONFIDENTIAL: 0, RESTRICTED: 1 },
          status: { ACTIVE: 251, PLANNED: 0, DEPRECATED: 0, RETIRED: 1 }
        })
      }))

    it.effect("finds a function by code with its own fields only, in its tenant only", () =>
      Effect.gen(function*() {
        const functions = yield* FunctionRepository
        const [acc] = yield* searchFunctions(tenantA, "FIN-ACC")
        expect(yield* functions.findByCode(tenantA, "FIN-ACC")).toEqual(Option.some({
          id: acc!.id,
          code: "FIN-ACC",
          name: "Accounting",
          description: null,
          parentId: acc!.parentId,
          createdAt: acc!.createdAt,
          updatedAt: acc!.updatedAt
        }))
        expect(yield* functions.findByCode(tenantB, "FIN-ACC")).toEqual(Option.none())
        expect(yield* functions.selfAndAncestorIds(tenantA, acc!.id)).toEqual([acc!.id, acc!.parentId])
        expect(yield* functions.selfAndAncestorIds(tenantB, acc!.id)).toEqual([])
      }))

    it.effect("sorts by code bytewise, as PostgreSQL's COLLATE \"C\" does, beyond the first 65,536 characters too", () =>
      Effect.gen(function*() {
        yield* putApplication(tenantC, "APP-C", appInput({ name: "C" }), "ops")
        for (const code of ["ORD-\u{1F600}", "ORD-\uFF21", "ORD-a", "ORD-B"]) {
          const fn = yield* createFunction(tenantC, fnInput({ code, name: code }))
          yield* linkApplication(tenantC, fn.id, "APP-C")
        }
        const bytewise = ["ORD-B", "ORD-a", "ORD-\uFF21", "ORD-\u{1F600}"]
        expect((yield* searchFunctions(tenantC, "ord-")).map((fn) => fn.code)).toEqual(bytewise)
        // The forest's siblings, roots here, in the same order.
        expect((yield* walkedFlat(tenantC)).map((fn) => fn.code)).toEqual(bytewise)
        expect((yield* listFunctionsByApplication(tenantC, "APP-C")).map((fn) => fn.code)).toEqual(bytewise)
        // A page resumes after its last code in that same order.
        const second = yield* searchFunctionsPage(tenantC, "ord-", { limit: 1, cursor: Option.getOrThrow((yield* searchFunctionsPage(tenantC, "ord-", { limit: 2 })).next) })
        expect(second.items.map((fn) => fn.code)).toEqual([bytewise[2]])
      }))

    it.effect("walks the forest in tree order: a parent before its subtree, siblings by code point, in batches, from its tenant only", () =>
      Effect.gen(function*() {
        const tenantW = "88888888-8888-4888-8888-888888888888"
        yield* putApplication(tenantW, "APP-E", appInput({ name: "E" }), "ops")
        const made = new Map<string, string>()
        // Written children first where they can be, so that no storage order happens to be the answer.
        const add = (code: string, parent: string | null) =>
          Effect.map(createFunction(tenantW, fnInput({ code, name: code, ...(parent === null ? {} : { parentId: made.get(parent)! }) })), (fn) => {
            made.set(code, fn.id)
            return fn
          })
        for (const root of ["\u00C9", "AB", "A!", "A"]) yield* add(root, null)
        for (const [code, parent] of [["A.b", "A"], ["A.a", "A"], ["A.a.\u{1F600}", "A.a"], ["A.a.\uFF21", "A.a"], ["A.a.z", "A.a"], ["A!.1", "A!"]] as const) {
          yield* add(code, parent)
        }
        // A chain deeper than a batch is long, under the last root.
        let parent = "\u00C9"
        for (let depth = 2; depth <= 8; depth++) parent = (yield* add(`E${depth}`, parent)).code
        yield* linkApplication(tenantW, made.get("A.a.z")!, "APP-E")
        yield* createFunction(tenantA, fnInput({ code: "A.0", name: "another tenant's" }))

        const functions = yield* FunctionRepository
        const batches = [...(yield* Stream.runCollect(functions.walk(tenantW)))]
        const walk = batches.flat()
        expect(walk.map((fn) => [fn.code, fn.level])).toEqual([
          ["A", 1], ["A.a", 2], ["A.a.z", 3], ["A.a.\uFF21", 3], ["A.a.\u{1F600}", 3], ["A.b", 2],
          ["A!", 1], ["A!.1", 2],
          ["AB", 1],
          ["\u00C9", 1], ["E2", 2], ["E3", 3], ["E4", 4], ["E5", 5], ["E6", 6], ["E7", 7], ["E8", 8]
        ])
        expect(walk.find((fn) => fn.code === "A.a.z")!.applicationCodes).toEqual(["APP-E"])
        expect(walk.find((fn) => fn.code === "A.a")!.parentId).toBe(made.get("A"))
        expect(batches.every((batch) => batch.length > 0)).toBe(true)
        // A reader that stops early ends the walk and gives its connection back: more such walks
        // than the pool has connections, then a read.
        for (let i = 0; i < 12; i++) expect((yield* Stream.runHead(functions.walk(tenantW))).pipe(Option.map((batch) => batch[0]!.code))).toEqual(Option.some("A"))
        expect((yield* walkedFlat(tenantW)).length).toBe(walk.length)
      }))

    it.effect("walks past a batch's end between a parent and its child, and pages a walk stopped early", () =>
      Effect.gen(function*() {
        const tenantX = "99999999-9999-4999-8999-999999999999"
        // 249 roots, then a root whose child comes after the 250th function: in the next batch.
        for (let i = 0; i < 249; i++) yield* createFunction(tenantX, fnInput({ code: `L${String(i).padStart(3, "0")}`, name: `leaf ${i}` }))
        const m = yield* createFunction(tenantX, fnInput({ code: "M", name: "parent" }))
        yield* createFunction(tenantX, fnInput({ code: "M.1", name: "child", parentId: m.id }))
        const tree = yield* walkedTree(tenantX)
        expect(tree.length).toBe(250)
        expect(tree.at(-1)!.children.map((child) => [child.code, child.level])).toEqual([["M.1", 2]])
        const codes = (fns: ReadonlyArray<{ readonly code: string }>) => fns.map((fn) => fn.code)
        // Every page stops its walk after its own functions; the pool's connections all come back.
        let cursor: string | undefined
        const paged: Array<string> = []
        for (let page = 0; page < 26; page++) {
          const { items, next } = yield* listFunctionsFlatPage(tenantX, { limit: 10, ...(cursor === undefined ? {} : { cursor }) })
          paged.push(...codes(items))
          cursor = Option.getOrUndefined(next)
          if (cursor === undefined) break
        }
        expect(paged).toEqual(codes(yield* walkedFlat(tenantX)))
        expect(paged.slice(-2)).toEqual(["M", "M.1"])
      }))

    it.effect("pages the flat list in tree order, the search and an application's functions by code", () =>
      Effect.gen(function*() {
        const tenantD = "66666666-6666-4666-8666-666666666666"
        yield* putApplication(tenantD, "APP-D", appInput({ name: "D" }), "ops")
        for (const root of ["R1", "R2", "R3"]) {
          const parent = yield* createFunction(tenantD, fnInput({ code: root, name: `Root ${root}` }))
          for (const leaf of ["b", "a", "c"]) {
            const child = yield* createFunction(tenantD, fnInput({ code: `${root}-${leaf}`, name: `Leaf ${leaf}`, parentId: parent.id }))
            yield* linkApplication(tenantD, child.id, "APP-D")
            yield* createFunction(tenantD, fnInput({ code: `${root}-${leaf}-x`, name: `Leaf ${leaf} x`, parentId: child.id }))
          }
        }
        const codes = (fns: ReadonlyArray<{ readonly code: string }>) => fns.map((fn) => fn.code)
        expect(codes((yield* allPages((cursor) => listFunctionsFlatPage(tenantD, { limit: 4, cursor }))).items)).toEqual(codes(yield* walkedFlat(tenantD)))
        expect(codes((yield* allPages((cursor) => searchFunctionsPage(tenantD, "leaf", { limit: 5, cursor }))).items)).toEqual(
          codes(yield* searchFunctions(tenantD, "leaf"))
        )
        expect(codes((yield* allPages((cursor) => listFunctionsByApplicationPage(tenantD, "APP-D", { limit: 2, cursor }))).items)).toEqual(
          codes(yield* listFunctionsByApplication(tenantD, "APP-D"))
        )

        // A function written before the cursor's place, or the cursor's own function gone, shifts nothing.
        const first = yield* listFunctionsFlatPage(tenantD, { limit: 5 })
        expect(codes(first.items)).toEqual(["R1", "R1-a", "R1-a-x", "R1-b", "R1-b-x"])
        const [r1] = yield* searchFunctions(tenantD, "Root R1")
        yield* createFunction(tenantD, fnInput({ code: "R1-0", name: "Inserted", parentId: r1!.id }))
        const [gone] = yield* searchFunctions(tenantD, "R1-b-x")
        yield* deleteFunction(tenantD, gone!.id)
        const second = yield* listFunctionsFlatPage(tenantD, { limit: 3, cursor: Option.getOrThrow(first.next) })
        expect(codes(second.items)).toEqual(["R1-c", "R1-c-x", "R2"])

        const search = yield* searchFunctionsPage(tenantD, "leaf", { limit: 1 })
        const misused = [
          listFunctionsByApplicationPage(tenantD, "APP-D", { cursor: Option.getOrThrow(search.next) }),
          searchFunctionsPage(tenantD, "root", { cursor: Option.getOrThrow(search.next) }),
          searchFunctionsPage(tenantA, "leaf", { cursor: Option.getOrThrow(search.next) }),
          listFunctionsFlatPage(tenantD, { cursor: Option.getOrThrow(search.next) })
        ]
        for (const call of misused) expect((yield* Effect.flip(call)).detail).toMatch(/^invalid cursor/)
      }))
  })
})
