import { describe, expect, layer } from "@effect/vitest"
import { Clock, Effect } from "effect"
import { TestClock } from "effect/testing"
import { getApplication, listApplicationChanges } from "../../src/usecases/ApplicationQueries.js"
import { referentialRevisions } from "../../src/usecases/FunctionQueries.js"
import { putApplication } from "../../src/usecases/PutApplication.js"
import { changesOf, encode, minimal } from "../support/ApplicationBodies.js"
import { appInput, tenantA } from "../support/Fixtures.js"
import { MemoryLayer } from "../support/Memory.js"

describe("putApplication", () => {
  layer(MemoryLayer)("creation", (it) => {
    it.effect("gives the documented defaults to absent fields (docs/product-rules.md#referential)", () =>
      Effect.gen(function*() {
        const created = yield* putApplication(tenantA, "APP-MIN", appInput({ name: "Minimal" }), "ops")
        expect(encode(created)).toEqual(minimal("APP-MIN", "Minimal"))
        expect(encode(yield* getApplication(tenantA, "APP-MIN"))).toEqual(minimal("APP-MIN", "Minimal"))
      }))

    it.effect("stores every field and derives the deprecated ones", () =>
      Effect.gen(function*() {
        const created = yield* putApplication(
          tenantA,
          "APP-CORE",
          appInput({
            name: "Core Banking",
            description: "Ledger",
            status: "PLANNED",
            dataClassification: "RESTRICTED",
            criticality: "MISSION_CRITICAL",
            rtoHours: 1.5,
            rpoHours: 0,
            regulations: "NIS2,DORA",
            roleAssignments: "TECH_LEAD:tom,PRODUCT_OWNER:paula,TECH_LEAD:tara",
            licenseCost: 100,
            supportCost: null,
            infraCost: 20,
            staffCost: 3
          }),
          "ops"
        )
        expect(encode(created)).toEqual({
          ...minimal("APP-CORE", "Core Banking"),
          description: "Ledger",
          status: "PLANNED",
          dataClassification: "RESTRICTED",
          criticality: "MISSION_CRITICAL",
          rtoHours: 1.5,
          rpoHours: 0,
          regulations: "DORA,NIS2",
          roleAssignments: "TECH_LEAD:tom,PRODUCT_OWNER:paula,TECH_LEAD:tara",
          licenseCost: 100,
          infraCost: 20,
          staffCost: 3,
          annualCost: 123,
          applicationVip: true,
          contactIT: "tom",
          contactMetier: "paula"
        })
      }))

    it.effect("records each tracked field that gets a value, old value null, one changedAt and author", () =>
      Effect.gen(function*() {
        yield* TestClock.adjust("90 seconds")
        const now = yield* Clock.currentTimeMillis
        yield* putApplication(
          tenantA,
          "APP-LOG",
          appInput({ name: "Logged", description: "untracked", rtoHours: 4, regulations: "RGPD", licenseCost: 5 }),
          "alice"
        )
        const entries = yield* listApplicationChanges(tenantA, "APP-LOG", undefined)
        // Newest first: within one PUT, the reverse of the tracked fields' order.
        expect(entries.map(({ field, newValue, oldValue }) => ({ field, oldValue, newValue }))).toEqual([
          { field: "status", oldValue: null, newValue: "ACTIVE" },
          { field: "licenseCost", oldValue: null, newValue: "5" },
          { field: "regulations", oldValue: null, newValue: "RGPD" },
          { field: "dataClassification", oldValue: null, newValue: "INTERNAL" },
          { field: "rtoHours", oldValue: null, newValue: "4" },
          { field: "criticality", oldValue: null, newValue: "NOMINAL" }
        ])
        expect(new Set(entries.map((entry) => entry.changedAt.epochMilliseconds))).toEqual(new Set([now]))
        expect(new Set(entries.map((entry) => entry.changedBy))).toEqual(new Set(["alice"]))
        expect(new Set(entries.map((entry) => entry.id)).size).toBe(entries.length)
      }))
  })

  layer(MemoryLayer)("update", (it) => {
    it.effect("keeps absent fields, clears null ones, and logs one entry per changed tracked field", () =>
      Effect.gen(function*() {
        yield* putApplication(
          tenantA,
          "APP-1",
          appInput({ name: "One", description: "d", rtoHours: 2, rpoHours: 1, supportCost: 7, regulations: "DORA", roleAssignments: "ARCHITECT:ann" }),
          "ops"
        )
        yield* TestClock.adjust("1 minute")
        const updated = yield* putApplication(
          tenantA,
          "APP-1",
          appInput({ name: "One renamed", description: null, rpoHours: null, staffCost: 9, regulations: "DORA,HDS", status: "DEPRECATED" }),
          "bob"
        )
        expect(encode(updated)).toEqual({
          ...minimal("APP-1", "One renamed"),
          status: "DEPRECATED",
          rtoHours: 2,
          regulations: "DORA,HDS",
          roleAssignments: "ARCHITECT:ann",
          supportCost: 7,
          staffCost: 9,
          annualCost: 16,
          updatedAt: "1970-01-01T00:01:00.000Z"
        })
        const latest = (yield* listApplicationChanges(tenantA, "APP-1", undefined)).filter((entry) => entry.changedBy === "bob")
        expect(latest.map(({ field, newValue, oldValue }) => ({ field, oldValue, newValue }))).toEqual([
          { field: "status", oldValue: "ACTIVE", newValue: "DEPRECATED" },
          { field: "staffCost", oldValue: null, newValue: "9" },
          { field: "regulations", oldValue: "DORA", newValue: "DORA,HDS" },
          { field: "rpoHours", oldValue: "1", newValue: null }
        ])
      }))

    it.effect.each([
      ["criticality", { criticality: "LOW" }, { field: "criticality", oldValue: "NOMINAL", newValue: "LOW" }],
      ["rtoHours", { rtoHours: 0.25 }, { field: "rtoHours", oldValue: null, newValue: "0.25" }],
      ["rpoHours", { rpoHours: 12 }, { field: "rpoHours", oldValue: null, newValue: "12" }],
      ["dataClassification", { dataClassification: "PUBLIC" }, { field: "dataClassification", oldValue: "INTERNAL", newValue: "PUBLIC" }],
      ["regulations", { regulations: "PCI_DSS" }, { field: "regulations", oldValue: null, newValue: "PCI_DSS" }],
      ["roleAssignments", { roleAssignments: "DATA_OWNER:dan" }, { field: "roleAssignments", oldValue: null, newValue: "DATA_OWNER:dan" }],
      ["licenseCost", { licenseCost: 1 }, { field: "licenseCost", oldValue: null, newValue: "1" }],
      ["supportCost", { supportCost: 2 }, { field: "supportCost", oldValue: null, newValue: "2" }],
      ["infraCost", { infraCost: 3 }, { field: "infraCost", oldValue: null, newValue: "3" }],
      ["staffCost", { staffCost: 4 }, { field: "staffCost", oldValue: null, newValue: "4" }],
      ["status", { status: "RETIRED" }, { field: "status", oldValue: "ACTIVE", newValue: "RETIRED" }]
    ] as const)("records a change of %s", ([field, change, entry]) =>
      Effect.gen(function*() {
        const code = `TRACK-${field}`
        yield* putApplication(tenantA, code, appInput({ name: "Tracked" }), "ops")
        const before = (yield* listApplicationChanges(tenantA, code, undefined)).length
        yield* putApplication(tenantA, code, appInput({ name: "Tracked", ...change }), "ops")
        const after = yield* changesOf(tenantA, code)
        expect(after.length - before).toBe(1)
        expect(after[0]).toEqual(entry)
      }))

    it.effect("records nothing for untracked fields, and writes nothing for an identical PUT, moving no revision", () =>
      Effect.gen(function*() {
        yield* putApplication(tenantA, "APP-U", appInput({ name: "U", rtoHours: 3 }), "ops")
        const created = yield* changesOf(tenantA, "APP-U")
        const atCreation = yield* referentialRevisions(tenantA)
        yield* TestClock.adjust("1 hour")
        const renamedAt = yield* Clock.currentTimeMillis
        const renamed = yield* putApplication(tenantA, "APP-U", appInput({ name: "U2", description: "new" }), "ops")
        expect(renamed.updatedAt.epochMilliseconds).toBe(renamedAt)
        const revisions = yield* referentialRevisions(tenantA)
        expect(revisions.applications).toBeGreaterThan(atCreation.applications)
        expect(revisions.functions).toBe(atCreation.functions)
        yield* TestClock.adjust("1 hour")
        const same = yield* putApplication(tenantA, "APP-U", appInput({ name: "U2", rtoHours: 3 }), "ops")
        expect(same.updatedAt.epochMilliseconds).toBe(renamedAt)
        expect(yield* referentialRevisions(tenantA)).toEqual(revisions)
        expect(yield* changesOf(tenantA, "APP-U")).toEqual(created)
      }))
  })
})
