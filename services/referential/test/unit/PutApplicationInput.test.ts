import { describe, expect, layer } from "@effect/vitest"
import { Conflict, InvalidRegulation, InvalidRequest, NotFound } from "@portfolio/domain"
import { Effect } from "effect"
import { getApplication } from "../../src/usecases/ApplicationQueries.js"
import { putApplication } from "../../src/usecases/PutApplication.js"
import { changesOf, encode, minimal } from "../support/ApplicationBodies.js"
import { appInput, type CapturedLog, capturingLogger, tenantA, tenantB } from "../support/Fixtures.js"
import { MemoryLayer } from "../support/Memory.js"

describe("putApplication", () => {
  layer(MemoryLayer)("deprecated fields", (it) => {
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

  layer(MemoryLayer)("refusals", (it) => {
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
  layer(MemoryLayer)("reads", (it) => {
    it.effect("is null with no cost, the sum with any cost (zero included)", () =>
      Effect.gen(function*() {
        expect((yield* putApplication(tenantA, "A-0", appInput({ name: "none" }), "ops")).annualCost).toBe(null)
        expect((yield* putApplication(tenantA, "A-1", appInput({ name: "zero", supportCost: 0 }), "ops")).annualCost).toBe(0)
        expect((yield* putApplication(tenantA, "A-2", appInput({ name: "all", licenseCost: 1, supportCost: 2, infraCost: 3, staffCost: 4 }), "ops")).annualCost)
          .toBe(10)
      }))
  })
})
