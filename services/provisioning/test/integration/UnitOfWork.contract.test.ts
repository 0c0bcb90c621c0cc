import { expect, layer } from "@effect/vitest"
import { UnitOfWork } from "@portfolio/platform/sql"
import { Effect, Result, Exit, Fiber, Option } from "effect"
import { TenantRepository } from "../../src/ports/TenantRepository.js"
import { adaptersUnderTest, openUnitOfWork, storedTenant } from "../support/AdaptersUnderTest.js"

const exists = (slug: string) => Effect.flatMap(TenantRepository, (tenants) => Effect.map(tenants.findBySlug(slug), Option.isSome))

for (const adapters of adaptersUnderTest) {
  layer(adapters.layer, { timeout: 60_000, excludeTestServices: true })(`UnitOfWork contract, ${adapters.name}`, (it) => {
    it.effect("commits every write of work that succeeds, and answers its result", () =>
      Effect.gen(function*() {
        const unitOfWork = yield* UnitOfWork
        const result = yield* unitOfWork.run(Effect.as(Effect.andThen(storedTenant("commit-a"), storedTenant("commit-b")), "done"))
        expect(result).toBe("done")
        expect([yield* exists("commit-a"), yield* exists("commit-b")]).toEqual([true, true])
      }))

    it.effect("rolls back every write of work that fails, and passes its failure on unchanged", () =>
      Effect.gen(function*() {
        const unitOfWork = yield* UnitOfWork
        const failure = yield* Effect.flip(unitOfWork.run(Effect.andThen(storedTenant("failed-a"), Effect.fail("refused" as const))))
        expect(failure).toBe("refused")
        expect(yield* exists("failed-a")).toBe(false)
      }))

    it.effect("rolls back the writes of work that dies", () =>
      Effect.gen(function*() {
        const unitOfWork = yield* UnitOfWork
        const exit = yield* Effect.exit(unitOfWork.run(Effect.andThen(storedTenant("died-a"), Effect.die(new Error("bug")))))
        expect(Exit.isFailure(exit) && !Exit.hasInterrupts(exit)).toBe(true)
        expect(yield* exists("died-a")).toBe(false)
      }))

    it.effect("a unit of work inside another one that fails undoes only its own writes", () =>
      Effect.gen(function*() {
        const unitOfWork = yield* UnitOfWork
        yield* unitOfWork.run(Effect.gen(function*() {
          yield* storedTenant("outer")
          const inner = yield* Effect.result(unitOfWork.run(Effect.andThen(storedTenant("inner"), Effect.fail("refused" as const))))
          expect(inner).toEqual(Result.fail("refused"))
        }))
        expect([yield* exists("outer"), yield* exists("inner")]).toEqual([true, false])
      }))

    it.effect("no one else sees the writes of work in progress until it ends", () =>
      Effect.gen(function*() {
        const work = yield* openUnitOfWork(storedTenant("in-progress"), Effect.void)
        expect(yield* exists("in-progress")).toBe(false)
        yield* work.finish
        expect(yield* exists("in-progress")).toBe(true)
      }))

    it.effect("work that fails undoes only its own writes, not those made meanwhile outside it", () =>
      Effect.gen(function*() {
        const work = yield* openUnitOfWork(storedTenant("rolled-back"), Effect.fail("refused" as const))
        const outside = yield* Effect.forkChild(storedTenant("written-meanwhile"))
        yield* Effect.sleep("200 millis")
        expect(yield* Effect.flip(work.finish)).toBe("refused")
        yield* Fiber.join(outside)
        expect([yield* exists("rolled-back"), yield* exists("written-meanwhile")]).toEqual([false, true])
      }))
  })
}
