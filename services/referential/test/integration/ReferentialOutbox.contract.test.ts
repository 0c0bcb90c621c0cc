import { describe, expect, layer } from "@effect/vitest"
import { ApplicationCreated, ApplicationUpdated, type ApplicationEvent } from "@portfolio/domain"
import { DateTime, Effect } from "effect"
import { applicationEvent } from "../../src/domain/ApplicationEventPayload.js"
import { ReferentialOutbox } from "../../src/ports/ReferentialOutbox.js"
import { putApplication } from "../../src/usecases/PutApplication.js"
import { writing } from "../../src/usecases/Writing.js"
import { adapters, StoredEvents, StoredRows } from "../support/Adapters.js"
import { appInput, applicationRecord, tenantA, tenantB } from "../support/Fixtures.js"

const eventsOf = (tenantId: string) =>
  Effect.flatMap(StoredEvents, (stored) => stored(tenantId)).pipe(
    Effect.map((events) => events.filter((event): event is ApplicationEvent => event.type !== "das.submitted"))
  )
const created = (tenantId: string, code: string, id: string): ApplicationEvent =>
  applicationEvent({ id, tenantId, createdAt: DateTime.makeUnsafe(0), created: true, after: applicationRecord(code), changes: [] })

describe.each(adapters)("ReferentialOutbox contract, $name", ({ layer: adapter }) => {
  layer(adapter, { timeout: 60_000, excludeTestServices: true })((it) => {
    it.effect("keeps a tenant's events in append order, each tenant its own", () =>
      Effect.gen(function*() {
        const events = yield* ReferentialOutbox
        const first = created(tenantA, "APP-1", "a1111111-1111-4111-8111-111111111111")
        const second = created(tenantA, "APP-2", "a2222222-2222-4222-8222-222222222222")
        const other = created(tenantB, "APP-1", "b1111111-1111-4111-8111-111111111111")
        yield* writing(tenantA, [], () => events.append([first, second]))
        yield* writing(tenantB, [], () => events.append([other]))
        expect(yield* eventsOf(tenantA)).toEqual([first, second])
        expect(yield* eventsOf(tenantB)).toEqual([other])
      }))

    it.effect("writes an event exactly when the change commits: none for a rolled-back write or a no-op PUT", () =>
      Effect.gen(function*() {
        const tenant = "55555555-5555-4555-8555-555555555555"
        const events = yield* ReferentialOutbox
        const rows = yield* StoredRows
        yield* Effect.flip(writing(tenant, [], () => Effect.andThen(events.append([created(tenant, "APP-X", crypto.randomUUID())]), Effect.fail("refused"))))
        expect(yield* eventsOf(tenant)).toEqual([])

        yield* putApplication(tenant, "APP-E", appInput({ name: "E", rtoHours: 4 }), "ops")
        yield* putApplication(tenant, "APP-E", appInput({ name: "E", rtoHours: 2 }), "ops")
        yield* putApplication(tenant, "APP-E", appInput({ name: "E", rtoHours: 2 }), "ops")
        const stored = yield* eventsOf(tenant)
        expect(stored.map((event) => event.constructor)).toEqual([ApplicationCreated, ApplicationUpdated])
        expect(stored.map((event) => event.data.revision)).toEqual([1, 2])
        expect(stored[1]).toMatchObject({ data: { rtoHours: 2, changes: [{ field: "rtoHours", oldValue: "4", newValue: "2" }] } })
        // The no-op PUT wrote no change log either: the first PUT's four entries and the update's one.
        expect((yield* rows(tenant)).application_changes).toBe(5)
      }))
  })
})
