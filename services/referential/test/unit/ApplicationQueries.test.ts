import { describe, expect, layer } from "@effect/vitest"
import { NotFound } from "@portfolio/domain"
import { Effect } from "effect"
import { getApplication, listApplicationChanges } from "../../src/usecases/ApplicationQueries.js"
import { listApplications } from "../support/ApplicationLists.js"
import { putApplication } from "../../src/usecases/PutApplication.js"
import { appInput, tenantA, tenantB } from "../support/Fixtures.js"
import { MemoryLayer } from "../support/Memory.js"

const seed = Effect.gen(function*() {
  yield* putApplication(tenantA, "B-2", appInput({ name: "b2", dataClassification: "RESTRICTED", criticality: "MISSION_CRITICAL", regulations: "DORA,NIS2" }), "ops")
  yield* putApplication(tenantA, "A-1", appInput({ name: "a1", dataClassification: "RESTRICTED", criticality: "LOW", regulations: "NIS2", status: "RETIRED" }), "ops")
  yield* putApplication(tenantA, "C-3", appInput({ name: "c3", dataClassification: "PUBLIC", criticality: "MISSION_CRITICAL" }), "ops")
  yield* putApplication(tenantB, "B-2", appInput({ name: "other tenant", dataClassification: "RESTRICTED", regulations: "DORA" }), "ops")
  // 210 tracked changes on one application, one rtoHours value at a time.
  yield* putApplication(tenantA, "BULK", appInput({ name: "bulk", rtoHours: 0 }), "ops")
  for (let hours = 1; hours <= 210; hours++) yield* putApplication(tenantA, "BULK", appInput({ name: "bulk", rtoHours: hours }), "ops")
})

const codes = (filters: Parameters<typeof listApplications>[1]) =>
  Effect.map(listApplications(tenantA, filters), (apps) => apps.map((app) => app.code))

describe("application reads", () => {
  layer(MemoryLayer)((it) => {
    it.effect("lists the tenant's applications sorted by code, filters combined with AND", () =>
      Effect.gen(function*() {
        yield* seed
        expect(yield* codes({})).toEqual(["A-1", "B-2", "BULK", "C-3"])
        expect(yield* codes({ data_class: "RESTRICTED" })).toEqual(["A-1", "B-2"])
        expect(yield* codes({ criticality: "MISSION_CRITICAL" })).toEqual(["B-2", "C-3"])
        expect(yield* codes({ regulation: "NIS2" })).toEqual(["A-1", "B-2"])
        expect(yield* codes({ regulation: "DORA" })).toEqual(["B-2"])
        expect(yield* codes({ status: "RETIRED" })).toEqual(["A-1"])
        expect(yield* codes({ status: "ACTIVE", data_class: "RESTRICTED" })).toEqual(["B-2"])
        expect(yield* codes({ regulation: "NIS2", criticality: "LOW", status: "RETIRED", data_class: "RESTRICTED" })).toEqual(["A-1"])
        expect(yield* codes({ regulation: "HDS" })).toEqual([])
      }))

    it.effect("answers 404 for an unknown code and for another tenant's application", () =>
      Effect.gen(function*() {
        expect(yield* Effect.flip(getApplication(tenantA, "NOPE"))).toEqual(new NotFound({ detail: "No application with code 'NOPE'." }))
        expect(yield* Effect.flip(getApplication(tenantB, "C-3"))).toEqual(new NotFound({ detail: "No application with code 'C-3'." }))
        expect((yield* getApplication(tenantB, "B-2")).name).toBe("other tenant")
        expect(yield* Effect.flip(listApplicationChanges(tenantB, "BULK", undefined))).toBeInstanceOf(NotFound)
      }))

    it.effect("lists changes newest first, 50 by default, at most 200", () =>
      Effect.gen(function*() {
        const values = (limit: number | undefined) =>
          Effect.map(listApplicationChanges(tenantA, "BULK", limit), (entries) => entries.map((entry) => entry.newValue))
        const newest = (count: number) => Array.from({ length: count }, (_, i) => String(210 - i))
        expect(yield* values(undefined)).toEqual(newest(50))
        expect(yield* values(1)).toEqual(newest(1))
        expect(yield* values(200)).toEqual(newest(200))
        expect(yield* values(5_000)).toEqual(newest(200))
      }))
  })
})
