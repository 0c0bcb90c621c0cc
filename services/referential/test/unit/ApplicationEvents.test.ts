import { describe, expect, it, layer } from "@effect/vitest"
import { ApplicationEvent } from "@portfolio/domain"
import { DateTime, Effect, Schema } from "effect"
import { trackedChanges } from "../../src/domain/ApplicationChanges.js"
import { applicationEvent } from "../../src/domain/ApplicationEventPayload.js"
import { putApplication } from "../../src/usecases/PutApplication.js"
import { seedDemo } from "../../src/usecases/SeedDemo.js"
import { minimal } from "../support/ApplicationBodies.js"
import { appInput, applicationRecord, tenantA } from "../support/Fixtures.js"
import { MemoryLayer } from "../support/Memory.js"
import { MemoryStore } from "../support/MemoryStore.js"

const encode = Schema.encodeSync(ApplicationEvent)
const eventId = "33333333-3333-4333-8333-333333333333"

describe("applicationEvent", () => {
  it("announces a creation with the single read's body and revision 1", () => {
    const after = applicationRecord("APP-1", { name: "One", criticality: "MISSION_CRITICAL" })
    const event = applicationEvent({ id: eventId, tenantId: tenantA, createdAt: DateTime.makeUnsafe(0), created: true, after, changes: [] })
    expect(encode(event)).toEqual({
      id: eventId,
      type: "application.created",
      createdAt: "1970-01-01T00:00:00.000Z",
      tenantId: tenantA,
      data: { ...minimal("APP-1", "One"), criticality: "MISSION_CRITICAL", applicationVip: true, revision: 1 }
    })
  })

  it("announces an update with its revision and the tracked fields that changed, old and new", () => {
    const before = applicationRecord("APP-1", { rtoHours: 4, regulations: ["DORA"] })
    const after = { ...before, rtoHours: 2, regulations: [], name: "Renamed", revision: 2 }
    const event = applicationEvent({
      id: eventId,
      tenantId: tenantA,
      createdAt: DateTime.makeUnsafe(0),
      created: false,
      after,
      changes: trackedChanges(before, after)
    })
    expect(encode(event)).toMatchObject({
      type: "application.updated",
      data: {
        name: "Renamed",
        rtoHours: 2,
        revision: 2,
        changes: [{ field: "rtoHours", oldValue: "4", newValue: "2" }, { field: "regulations", oldValue: "DORA", newValue: null }]
      }
    })
  })
})

/** The outbox of the in-memory adapter, as the unit of work committed it. */
const InMemoryWithEvents = Effect.map(MemoryStore, (memory) => (tenantId: string) =>
  memory.read(tenantId, (state) => state.events.filter((event): event is ApplicationEvent => event.type !== "das.submitted")))

describe("events of the use cases", () => {
  layer(MemoryLayer)((it) => {
    it.effect("a creation, an update and a no-op PUT give created then updated, revisions 1 and 2, and nothing more", () =>
      Effect.gen(function*() {
        const stored = yield* InMemoryWithEvents
        yield* putApplication(tenantA, "APP-EV", appInput({ name: "Events", criticality: "IMPORTANT" }), "ops")
        yield* putApplication(tenantA, "APP-EV", appInput({ name: "Events", criticality: "LOW", description: "now described" }), "ops")
        yield* putApplication(tenantA, "APP-EV", appInput({ name: "Events", criticality: "LOW", description: "now described" }), "ops")
        const events = (yield* stored(tenantA)).map((event) => encode(event))
        expect(events.map((event) => [event.type, event.data.revision, event.data.criticality])).toEqual([
          ["application.created", 1, "IMPORTANT"],
          ["application.updated", 2, "LOW"]
        ])
        expect(events[1]!.data).toMatchObject({
          description: "now described",
          changes: [{ field: "criticality", oldValue: "IMPORTANT", newValue: "LOW" }]
        })
        expect(new Set(events.map((event) => event.id)).size).toBe(2)
      }))

    it.effect("a refused PUT writes no event, and the demo seed announces each application at revision 1", () =>
      Effect.gen(function*() {
        const stored = yield* InMemoryWithEvents
        const tenant = "44444444-4444-4444-8444-444444444444"
        yield* Effect.flip(putApplication(tenant, "APP-ORPHAN", appInput({ name: "Orphan", parentCode: "APP-NONE" }), "ops"))
        expect(yield* stored(tenant)).toEqual([])
        const seeded = yield* seedDemo(tenant, { applications: 5, functions: 5, maxDepth: 2, seed: 7 }, "ops")
        const events = yield* stored(tenant)
        expect(events.map((event) => [event.type, event.data.revision])).toEqual(Array(seeded.applications).fill(["application.created", 1]))
      }))
  })
})
