import { expect, layer } from "@effect/vitest"
import { UnitOfWork } from "@portfolio/platform/sql"
import { Effect, Exit, Fiber } from "effect"
import { randomUUID } from "node:crypto"
import { NotificationLog } from "../../src/ports/NotificationLog.js"
import { adaptersUnderTest, openUnitOfWork, stillWaiting } from "../support/AdaptersUnderTest.js"

const claim = (eventId: string, recipient: string) => Effect.flatMap(NotificationLog, (log) => log.claim(eventId, recipient))

for (const adapters of adaptersUnderTest) {
  layer(adapters.layer, { timeout: 60_000, excludeTestServices: true })(`NotificationLog contract, ${adapters.name}`, (it) => {
    it.effect("claims each event and recipient once, the address compared case-insensitively", () =>
      Effect.gen(function*() {
        const event = randomUUID()
        expect(yield* claim(event, "Ann@Example.com")).toBe(true)
        expect(yield* claim(event, "ann@example.COM")).toBe(false)
        expect(yield* claim(event, "bob@example.com")).toBe(true)
        expect(yield* claim(randomUUID(), "ann@example.com")).toBe(true)
      }))

    it.effect("forgets a claim whose unit of work fails", () =>
      Effect.gen(function*() {
        const unitOfWork = yield* UnitOfWork
        const event = randomUUID()
        const failed = yield* Effect.exit(unitOfWork.run(Effect.andThen(claim(event, "ann@example.com"), Effect.fail("mail refused"))))
        expect(Exit.isFailure(failed)).toBe(true)
        expect(yield* claim(event, "ann@example.com")).toBe(true)
      }))

    it.effect("makes a concurrent claim of the same pair wait, then answers by the first one's outcome", () =>
      Effect.gen(function*() {
        const event = randomUUID()
        // The first holder commits: the waiting claim then finds it recorded.
        const committing = yield* openUnitOfWork(claim(event, "ann@example.com"), Effect.void)
        const second = yield* Effect.forkChild(Effect.flatMap(UnitOfWork, (u) => u.run(claim(event, "ann@example.com"))))
        expect(yield* stillWaiting(second)).toBe(true)
        yield* committing.finish
        expect(yield* Fiber.join(second)).toBe(false)

        // The first holder rolls back: the waiting claim then takes the pair.
        const other = randomUUID()
        const rollingBack = yield* openUnitOfWork(claim(other, "bob@example.com"), Effect.fail("mail refused"))
        const third = yield* Effect.forkChild(Effect.flatMap(UnitOfWork, (u) => u.run(claim(other, "bob@example.com"))))
        expect(yield* stillWaiting(third)).toBe(true)
        expect(Exit.isFailure(yield* Effect.exit(rollingBack.finish))).toBe(true)
        expect(yield* Fiber.join(third)).toBe(true)
      }))
  })
}
