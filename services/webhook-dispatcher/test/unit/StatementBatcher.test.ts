import { Deferred, Effect, Exit, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { makeStatementBatcher, rowsPerInput } from "../../src/adapters/postgres/StatementBatcher.js"

/** A statement that waits for `release` before answering, recording each batch it was given. */
const gatedStatement = Effect.gen(function*() {
  const batches: Array<ReadonlyArray<string>> = []
  const release = yield* Deferred.make<void>()
  const run = (batch: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      batches.push(batch)
      yield* Deferred.await(release)
      if (batch.includes("poison")) return yield* Effect.fail(`refused ${batch.join(",")}`)
      return batch.map((input) => input.toUpperCase())
    })
  return { batches, release, run }
})

describe("the statement batcher", () => {
  it("writes a lone call at once and gathers the calls made meanwhile into the next statement, each caller getting its own result", async () => {
    const { batches, results } = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const { batches, release, run } = yield* gatedStatement
      const call = yield* makeStatementBatcher(run, 256)
      const first = yield* Effect.forkChild(call("a"))
      yield* Effect.yieldNow
      const rest = yield* Effect.forkChild(Effect.all(["b", "c", "d"].map(call), { concurrency: "unbounded" }))
      yield* Effect.yieldNow
      yield* Deferred.succeed(release, undefined)
      return { batches, results: [yield* Fiber.await(first), yield* Fiber.await(rest)] }
    })))
    expect(batches).toEqual([["a"], ["b", "c", "d"]])
    expect(results).toEqual([Exit.succeed("A"), Exit.succeed(["B", "C", "D"])])
  })

  it("never puts more than its maximum in one statement", async () => {
    const batches = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const { batches, release, run } = yield* gatedStatement
      const call = yield* makeStatementBatcher(run, 2)
      yield* Deferred.succeed(release, undefined)
      yield* Effect.all(["a", "b", "c", "d", "e"].map(call), { concurrency: "unbounded" })
      return batches
    })))
    expect(batches.map((b) => b.length)).toEqual([2, 2, 1])
  })

  it("runs each call of a failed batch alone: the call the statement refuses fails, its neighbours succeed", async () => {
    const { batches, outcomes } = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const { batches, release, run } = yield* gatedStatement
      const call = yield* makeStatementBatcher(run, 256)
      const blocker = yield* Effect.forkChild(call("first"))
      yield* Effect.yieldNow
      const outcomes = yield* Effect.forkChild(Effect.all(["a", "poison", "c"].map((input) => Effect.exit(call(input))), { concurrency: "unbounded" }))
      yield* Effect.yieldNow
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.await(blocker)
      return { batches, outcomes: yield* Fiber.join(outcomes) }
    })))
    expect(batches).toEqual([["first"], ["a", "poison", "c"], ["a"], ["poison"], ["c"]])
    expect(outcomes).toEqual([Exit.succeed("A"), Exit.fail("refused poison"), Exit.succeed("C")])
  })

  it("with a least interval, gathers calls that come one after another, and writes a call after a quiet spell at once", async () => {
    /** Three callers one after another: each makes its call a few event-loop turns after the previous one was answered. */
    const oneAfterAnother = (minIntervalMs: number) =>
      Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const batches: Array<ReadonlyArray<string>> = []
        const call = yield* makeStatementBatcher((batch: ReadonlyArray<string>) => Effect.sync(() => (batches.push(batch), batch)), 256, { minIntervalMs })
        const plain = (input: string) => Effect.runPromise(Effect.asVoid(call(input)))
        const turns = () => new Promise<void>((resolve) => setImmediate(resolve))
        yield* Effect.promise(async () => {
          await plain("a")
          await turns()
          const b = plain("b")
          await turns()
          const c = plain("c")
          await Promise.all([b, c])
          // A quiet spell longer than the interval: the next call goes at once, alone.
          await new Promise((resolve) => setTimeout(resolve, minIntervalMs + 20))
          await plain("d")
        })
        return batches
      })))
    expect(await oneAfterAnother(0)).toEqual([["a"], ["b"], ["c"], ["d"]])
    expect(await oneAfterAnother(50)).toEqual([["a"], ["b", "c"], ["d"]])
  })
})

describe("rows handed to the inputs of a batch", () => {
  it("gives each input the rows naming it, in the inputs' order, and none to an input nothing names", () => {
    const rows = [{ event: "e2", id: "d3" }, { event: "e1", id: "d1" }, { event: "e1", id: "d2" }]
    expect(rowsPerInput(["e1", "e2", "e3"], rows, (e) => e, (r) => r.event)).toEqual([
      [{ event: "e1", id: "d1" }, { event: "e1", id: "d2" }],
      [{ event: "e2", id: "d3" }],
      []
    ])
  })

  it("gives a row to the first of two inputs naming it only: a delivery claimed twice in one statement is attempted once", () => {
    const rows = [{ id: "d1" }]
    expect(rowsPerInput(["d1", "d1"], rows, (id) => id, (r) => r.id)).toEqual([[{ id: "d1" }], []])
  })
})
