import { describe, expect, layer } from "@effect/vitest"
import type { HttpServerResponse } from "@effect/platform"
import { FunctionTreeNode } from "@portfolio/domain"
import { FunctionRepository } from "../../src/ports/FunctionRepository.js"
import { Effect, Exit, Layer, Schema } from "effect"
import { cachedJson, EncodedReadCache } from "../../src/adapters/http/EncodedReadCache.js"
import { createFunction } from "../../src/usecases/FunctionCommands.js"
import { getFunctionTree } from "../../src/usecases/FunctionQueries.js"
import { fnInput, tenantA, tenantB } from "../support/Fixtures.js"
import { InMemoryReferential } from "../support/InMemoryReferential.js"

/** Counts whole-forest reads, and can make the next one die. */
const probe = { reads: 0, failNext: false }
const CountingFunctions = Layer.effect(
  FunctionRepository,
  Effect.map(FunctionRepository, (inner) => ({
    ...inner,
    listAll: (tenantId: string) =>
      Effect.suspend(() => {
        probe.reads += 1
        if (probe.failNext) {
          probe.failNext = false
          return Effect.die("storage down")
        }
        return inner.listAll(tenantId)
      })
  }))
)
const TestLayer = Layer.mergeAll(CountingFunctions, EncodedReadCache.layer(1024 * 1024)).pipe(Layer.provideMerge(InMemoryReferential))

const Tree = Schema.Array(FunctionTreeNode)
const codes = (response: HttpServerResponse.HttpServerResponse) => {
  const body = response.body as { readonly body: Uint8Array; readonly contentType: string }
  expect(body.contentType).toBe("application/json")
  return (JSON.parse(new TextDecoder().decode(body.body)) as Array<{ code: string }>).map((node) => node.code)
}
const tree = (tenantId: string) =>
  Effect.flatMap(Effect.context<FunctionRepository>(), (storage) =>
    cachedJson("tree", tenantId, Tree, Effect.provide(getFunctionTree(tenantId), storage)))

describe("encoded read cache", () => {
  layer(TestLayer)((it) => {
    it.effect("serves the same tenant's tree from the cache until a write bumps the revision", () =>
      Effect.gen(function*() {
        yield* createFunction(tenantA, fnInput({ code: "A", name: "a" }))
        expect(codes(yield* tree(tenantA))).toEqual(["A"])
        expect(codes(yield* tree(tenantA))).toEqual(["A"])
        expect(probe.reads).toBe(1)

        yield* createFunction(tenantA, fnInput({ code: "B", name: "b" }))
        expect(codes(yield* tree(tenantA))).toEqual(["A", "B"])
        expect(probe.reads).toBe(2)

        expect(codes(yield* tree(tenantB))).toEqual([])
        expect(probe.reads).toBe(3)
      }))

    it.effect("builds once for concurrent requests after a write", () =>
      Effect.gen(function*() {
        yield* createFunction(tenantA, fnInput({ code: "C", name: "c" }))
        const before = probe.reads
        const answers = yield* Effect.all(Array.from({ length: 8 }, () => tree(tenantA)), { concurrency: "unbounded" })
        expect(answers.map(codes)).toEqual(Array.from({ length: 8 }, () => ["A", "B", "C"]))
        expect(probe.reads - before).toBe(1)
      }))

    it.effect("does not keep a failed build", () =>
      Effect.gen(function*() {
        yield* createFunction(tenantA, fnInput({ code: "D", name: "d" }))
        probe.failNext = true
        expect(Exit.isFailure(yield* Effect.exit(tree(tenantA)))).toBe(true)
        expect(codes(yield* tree(tenantA))).toEqual(["A", "B", "C", "D"])
      }))
  })
})

describe("encoded read cache budget", () => {
  // One single-node tree encodes to about 190 bytes: two of them do not fit in 300.
  const SmallCache = Layer.mergeAll(CountingFunctions, EncodedReadCache.layer(300)).pipe(Layer.provideMerge(InMemoryReferential))

  layer(SmallCache)((it) => {
    it.effect("drops the least recently used body when the next one does not fit", () =>
      Effect.gen(function*() {
        yield* createFunction(tenantA, fnInput({ code: "A", name: "a" }))
        yield* createFunction(tenantB, fnInput({ code: "B", name: "b" }))
        const start = probe.reads
        yield* tree(tenantA)
        yield* tree(tenantA)
        expect(probe.reads - start).toBe(1)
        yield* tree(tenantB)
        yield* tree(tenantB)
        expect(probe.reads - start).toBe(2)
        expect(codes(yield* tree(tenantA))).toEqual(["A"])
        expect(probe.reads - start).toBe(3)
      }))
  })
})
