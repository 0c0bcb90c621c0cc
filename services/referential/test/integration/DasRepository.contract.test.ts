import { describe, expect, layer } from "@effect/vitest"
import { Das, type DasSubmitted } from "@portfolio/domain"
import { UnitOfWork } from "@portfolio/platform/sql"
import { DateTime, Effect, Exit, Option } from "effect"
import { DasRepository } from "../../src/ports/DasRepository.js"
import { createDas, submitDas } from "../../src/usecases/DasCommands.js"
import { putApplication } from "../../src/usecases/PutApplication.js"
import { writing } from "../../src/usecases/Writing.js"
import { adapters, StoredEvents, StoredRows } from "../support/Adapters.js"
import { appInput, tenantA, tenantB } from "../support/Fixtures.js"

const dasEventsOf = (tenantId: string) =>
  Effect.flatMap(StoredEvents, (stored) => stored(tenantId)).pipe(
    Effect.map((events) => events.filter((event): event is DasSubmitted => event.type === "das.submitted"))
  )

const draft = (id: string, applicationCode: string, content: Das["content"] = null) =>
  new Das({
    id,
    applicationCode,
    title: `DAS of ${applicationCode}`,
    content,
    status: "DRAFT",
    createdAt: DateTime.makeUnsafe("2026-01-02T03:04:05.678Z"),
    submittedBy: null,
    submittedAt: null
  })

describe.each(adapters)("DasRepository contract, $name", ({ layer: adapter }) => {
  layer(adapter, { timeout: 60_000, excludeTestServices: true })((it) => {
    it.effect("keeps a record with its JSON content as given, in its tenant only", () =>
      Effect.gen(function*() {
        const records = yield* DasRepository
        yield* putApplication(tenantA, "APP-D", appInput({ name: "D" }), "ops")
        const content = { title: "Ledger", nested: { list: [1, 2.5, null, true], "clé": "été 😀" }, empty: {} }
        const das = draft("d1111111-1111-4111-8111-111111111111", "APP-D", content)
        yield* writing(tenantA, [], () => records.insert(tenantA, das))
        expect(yield* records.find(tenantA, das.id)).toEqual(Option.some(das))
        expect(yield* records.find(tenantB, das.id)).toEqual(Option.none())

        const submitted = new Das({ ...das, status: "SUBMITTED", submittedBy: "ops", submittedAt: DateTime.makeUnsafe("2026-01-03T00:00:00.000Z") })
        yield* writing(tenantA, [], () => records.update(tenantA, submitted))
        expect(yield* records.find(tenantA, das.id)).toEqual(Option.some(submitted))
      }))

    it.effect("refuses a record of an application its tenant does not have", () =>
      Effect.gen(function*() {
        const records = yield* DasRepository
        const rows = yield* StoredRows
        // APP-D exists in tenant A only: the key holds the tenant.
        const exit = yield* Effect.exit(writing(tenantB, [], () => records.insert(tenantB, draft("d2222222-2222-4222-8222-222222222222", "APP-D"))))
        expect(Exit.isFailure(exit)).toBe(true)
        expect((yield* rows(tenantB)).das).toBe(0)
      }))

    it.effect("a submission writes das.submitted in its own transaction: with the record as submitted, and never for a failed one", () =>
      Effect.gen(function*() {
        const records = yield* DasRepository
        const unitOfWork = yield* UnitOfWork
        const created = yield* createDas(tenantA, { applicationCode: "APP-D", title: "Rolled back", content: { a: 1 } })

        // The submission succeeds, then its unit of work fails: record and event roll back together.
        yield* Effect.flip(unitOfWork.run(Effect.andThen(submitDas(tenantA, created.id, "ops"), Effect.fail("refused"))))
        expect(Option.map(yield* records.find(tenantA, created.id), (das) => das.status)).toEqual(Option.some("DRAFT"))
        expect((yield* dasEventsOf(tenantA)).filter((event) => event.data.id === created.id)).toEqual([])

        const submitted = yield* submitDas(tenantA, created.id, "ops")
        yield* Effect.flip(submitDas(tenantA, created.id, "ops"))
        const events = (yield* dasEventsOf(tenantA)).filter((event) => event.data.id === created.id)
        expect(events).toHaveLength(1)
        expect(events[0]).toMatchObject({ type: "das.submitted", tenantId: tenantA, data: submitted })
        expect(yield* records.find(tenantA, created.id)).toEqual(Option.some(submitted))
      }))
  })
})
