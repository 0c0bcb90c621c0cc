import { describe, expect, layer } from "@effect/vitest"
import { Application, Conflict, InvalidRegulation, InvalidRequest, NotFound } from "@portfolio/domain"
import { Clock, Effect, Schema, TestClock } from "effect"
import { getApplication, listApplicationChanges } from "../../src/usecases/ApplicationQueries.js"
import { putApplication } from "../../src/usecases/PutApplication.js"
import { appInput, type CapturedLog, capturingLogger, tenantA, tenantB } from "../support/Fixtures.js"
import { InMemoryReferential } from "../support/InMemoryReferential.js"

const encode = Schema.encodeSync(Application)
const epoch = "1970-01-01T00:00:00.000Z"

/** The body of an application with nothing but a name: every default, every derivation empty. */
const minimal = (code: string, name: string) => ({
  code,
  name,
  description: null,
  parentCode: null,
  status: "ACTIVE",
  dataClassification: "INTERNAL",
  criticality: "NOMINAL",
  rtoHours: null,
  rpoHours: null,
  regulations: "",
  roleAssignments: "",
  licenseCost: null,
  supportCost: null,
  infraCost: null,
  staffCost: null,
  annualCost: null,
  applicationVip: false,
  contactIT: null,
  contactMetier: null,
  createdAt: epoch,
  updatedAt: epoch
})

const changesOf = (tenantId: string, code: string) =>
  Effect.map(listApplicationChanges(tenantId, code, 200), (entries) =>
    entries.map(({ field, newValue, oldValue }) => ({ field, oldValue, newValue })))

describe("putApplication", () => {
  layer(InMemoryReferential)("creation", (it) => {
    it.effect("gives the defaults of the spec to absent fields", () =>
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
        expect(new Set(entries.map((entry) => entry.changedAt.epochMillis))).toEqual(new Set([now]))
        expect(new Set(entries.map((entry) => entry.changedBy))).toEqual(new Set(["alice"]))
        expect(new Set(entries.map((entry) => entry.id)).size).toBe(entries.length)
      }))
  })

  layer(InMemoryReferential)("update", (it) => {
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

    it.effect("records nothing for untracked fields, and writes nothing for an identical PUT", () =>
      Effect.gen(function*() {
        yield* putApplication(tenantA, "APP-U", appInput({ name: "U", rtoHours: 3 }), "ops")
        const created = yield* changesOf(tenantA, "APP-U")
        yield* TestClock.adjust("1 hour")
        const renamedAt = yield* Clock.currentTimeMillis
        const renamed = yield* putApplication(tenantA, "APP-U", appInput({ name: "U2", description: "new" }), "ops")
        expect(renamed.updatedAt.epochMillis).toBe(renamedAt)
        yield* TestClock.adjust("1 hour")
        const same = yield* putApplication(tenantA, "APP-U", appInput({ name: "U2", rtoHours: 3 }), "ops")
        expect(same.updatedAt.epochMillis).toBe(renamedAt)
        expect(yield* changesOf(tenantA, "APP-U")).toEqual(created)
      }))
  })

  layer(InMemoryReferential)("deprecated fields", (it) => {
    it.effect("maps applicationVip, annualCost, contactIT and contactMetier, each with a warning", () =>
      Effect.gen(function*() {
        const logs: Array<CapturedLog> = []
        const created = yield* putApplication(
          tenantA,
          "APP-LEGACY",
          appInput({ name: "Legacy", applicationVip: true, annualCost: 90_000, contactIT: " ivan ", contactMetier: "mona" }),
          "ops"
        ).pipe(Effect.provide(capturingLogger(logs)))
        expect(encode(created)).toEqual({
          ...minimal("APP-LEGACY", "Legacy"),
          criticality: "MISSION_CRITICAL",
          roleAssignments: "TECH_LEAD:ivan,PRODUCT_OWNER:mona",
          licenseCost: 90_000,
          annualCost: 90_000,
          applicationVip: true,
          contactIT: "ivan",
          contactMetier: "mona"
        })
        expect(logs.filter((log) => log.level === "WARN")).toEqual(
          ["applicationVip", "annualCost", "contactIT", "contactMetier"].map((field) => ({
            level: "WARN",
            message: `deprecated field '${field}' set on application 'APP-LEGACY'`,
            annotations: { field, applicationCode: "APP-LEGACY" }
          }))
        )
      }))

    it.effect("gives way to the newer fields when both are present, still warning", () =>
      Effect.gen(function*() {
        const logs: Array<CapturedLog> = []
        const created = yield* putApplication(
          tenantA,
          "APP-BOTH",
          appInput({
            name: "Both",
            criticality: "LOW",
            applicationVip: true,
            licenseCost: 5,
            annualCost: 90_000,
            roleAssignments: "ARCHITECT:ann",
            contactIT: "ivan"
          }),
          "ops"
        ).pipe(Effect.provide(capturingLogger(logs)))
        expect(encode(created)).toEqual({
          ...minimal("APP-BOTH", "Both"),
          criticality: "LOW",
          roleAssignments: "ARCHITECT:ann",
          licenseCost: 5,
          annualCost: 5
        })
        expect(logs.filter((log) => log.level === "WARN").map((log) => log.annotations.field)).toEqual(["applicationVip", "annualCost", "contactIT"])
      }))

    it.effect("applicationVip false gives NOMINAL; contacts replace and null removes that role's pairs", () =>
      Effect.gen(function*() {
        yield* putApplication(
          tenantA,
          "APP-R",
          appInput({ name: "R", criticality: "IMPORTANT", roleAssignments: "TECH_LEAD:a,PRODUCT_OWNER:b,TECH_LEAD:c,ARCHITECT:d" }),
          "ops"
        )
        const updated = yield* putApplication(tenantA, "APP-R", appInput({ name: "R", applicationVip: false, contactIT: "e", contactMetier: null }), "ops")
        expect({ criticality: updated.criticality, roleAssignments: updated.roleAssignments, contactIT: updated.contactIT, contactMetier: updated.contactMetier })
          .toEqual({ criticality: "NOMINAL", roleAssignments: "ARCHITECT:d,TECH_LEAD:e", contactIT: "e", contactMetier: null })
      }))

    it.effect("refuses a contact holding a comma", () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(putApplication(tenantA, "APP-C", appInput({ name: "C", contactIT: "a,b" }), "ops"))
        expect(error).toEqual(new InvalidRequest({ detail: "contactIT: a contact cannot contain a comma." }))
      }))
  })

  layer(InMemoryReferential)("refusals", (it) => {
    it.effect("refuses an unknown regulation and stores nothing, on creation and on update", () =>
      Effect.gen(function*() {
        const created = yield* Effect.flip(putApplication(tenantA, "APP-X", appInput({ name: "X", regulations: "DORA,SOX" }), "ops"))
        expect(created).toBeInstanceOf(InvalidRegulation)
        expect(yield* Effect.flip(getApplication(tenantA, "APP-X"))).toBeInstanceOf(NotFound)

        yield* putApplication(tenantA, "APP-Y", appInput({ name: "Y", regulations: "DORA" }), "ops")
        const before = yield* getApplication(tenantA, "APP-Y")
        yield* Effect.flip(putApplication(tenantA, "APP-Y", appInput({ name: "Y2", regulations: "GDPR" }), "ops"))
        expect(yield* getApplication(tenantA, "APP-Y")).toEqual(before)
        // criticality, dataClassification, regulations and status of the creation, nothing since.
        expect((yield* changesOf(tenantA, "APP-Y")).length).toBe(4)
      }))

    it.effect("refuses a bad role pair", () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(putApplication(tenantA, "APP-Z", appInput({ name: "Z", roleAssignments: "CEO:bob" }), "ops"))
        expect(error).toBeInstanceOf(InvalidRequest)
      }))

    it.effect("needs the parent in the same tenant, and refuses cycles", () =>
      Effect.gen(function*() {
        yield* putApplication(tenantB, "P-B", appInput({ name: "B's" }), "ops")
        expect(yield* Effect.flip(putApplication(tenantA, "C-1", appInput({ name: "C", parentCode: "P-B" }), "ops"))).toEqual(
          new NotFound({ detail: "Parent application 'P-B' does not exist." })
        )
        yield* putApplication(tenantA, "P-1", appInput({ name: "P" }), "ops")
        yield* putApplication(tenantA, "C-1", appInput({ name: "C", parentCode: "P-1" }), "ops")
        yield* putApplication(tenantA, "G-1", appInput({ name: "G", parentCode: "C-1" }), "ops")
        expect(yield* Effect.flip(putApplication(tenantA, "P-1", appInput({ name: "P", parentCode: "G-1" }), "ops"))).toEqual(
          new Conflict({ detail: "Making 'G-1' the parent of 'P-1' would create a cycle: 'P-1' is above it." })
        )
        expect(yield* Effect.flip(putApplication(tenantA, "P-1", appInput({ name: "P", parentCode: "P-1" }), "ops"))).toEqual(
          new Conflict({ detail: "Application 'P-1' cannot be its own parent." })
        )
        // Absent keeps the parent; null detaches it.
        expect((yield* putApplication(tenantA, "G-1", appInput({ name: "G2" }), "ops")).parentCode).toBe("C-1")
        expect((yield* putApplication(tenantA, "G-1", appInput({ name: "G2", parentCode: null }), "ops")).parentCode).toBe(null)
      }))

    it.effect("refuses costs whose sum would not be exact", () =>
      Effect.gen(function*() {
        const big = Number.MAX_SAFE_INTEGER
        const error = yield* Effect.flip(putApplication(tenantA, "APP-BIG", appInput({ name: "Big", licenseCost: big, staffCost: 1 }), "ops"))
        expect(error).toBeInstanceOf(InvalidRequest)
      }))
  })
})

describe("derived annualCost", () => {
  layer(InMemoryReferential)("reads", (it) => {
    it.effect("is null with no cost, the sum with any cost (zero included)", () =>
      Effect.gen(function*() {
        expect((yield* putApplication(tenantA, "A-0", appInput({ name: "none" }), "ops")).annualCost).toBe(null)
        expect((yield* putApplication(tenantA, "A-1", appInput({ name: "zero", supportCost: 0 }), "ops")).annualCost).toBe(0)
        expect((yield* putApplication(tenantA, "A-2", appInput({ name: "all", licenseCost: 1, supportCost: 2, infraCost: 3, staffCost: 4 }), "ops")).annualCost)
          .toBe(10)
      }))
  })
})
