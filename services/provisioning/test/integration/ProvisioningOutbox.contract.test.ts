import { expect, layer } from "@effect/vitest"
import { MemberRemoved } from "@portfolio/domain"
import { newId } from "@portfolio/platform/ids"
import { UnitOfWork } from "@portfolio/platform/sql"
import { DateTime, Effect } from "effect"
import { ProvisioningOutbox } from "../../src/ports/ProvisioningOutbox.js"
import { adaptersUnderTest, StorageProbe, t0 } from "../support/AdaptersUnderTest.js"

const removal = (tenantId: string, userSub: string, minutes: number) =>
  Effect.map(newId, (id) =>
    MemberRemoved.make({ id, type: "member.removed", occurredAt: DateTime.add(t0, { minutes }), tenantId, userSub }))

/** What the outbox holds for one tenant, oldest first. */
const outboxOf = (tenantId: string) =>
  Effect.flatMap(StorageProbe, (probe) => Effect.map(probe.outbox, (events) => events.filter((e) => e.tenantId === tenantId)))

for (const adapters of adaptersUnderTest) {
  layer(adapters.layer, { timeout: 60_000, excludeTestServices: true })(`ProvisioningOutbox contract, ${adapters.name}`, (it) => {
    it.effect("keeps appended events as they were given, oldest first", () =>
      Effect.gen(function*() {
        const outbox = yield* ProvisioningOutbox
        const tenantId = yield* newId
        const first = yield* removal(tenantId, "sub-first", 0)
        const second = yield* removal(tenantId, "sub-second", 1)
        yield* outbox.append([first])
        yield* outbox.append([second])
        expect(yield* outboxOf(tenantId)).toEqual([first, second])
      }))

    it.effect("keeps nothing appended in a unit of work that fails", () =>
      Effect.gen(function*() {
        const outbox = yield* ProvisioningOutbox
        const unitOfWork = yield* UnitOfWork
        const tenantId = yield* newId
        const event = yield* removal(tenantId, "sub-kept-back", 0)
        yield* Effect.flip(unitOfWork.run(Effect.andThen(outbox.append([event]), Effect.fail("refused" as const))))
        expect(yield* outboxOf(tenantId)).toEqual([])
      }))
  })
}
