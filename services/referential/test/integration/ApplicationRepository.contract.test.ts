import { describe, expect, layer } from "@effect/vitest"
import { Application } from "@portfolio/domain"
import { Effect, Option, Schema, TestClock } from "effect"
import { ApplicationRepository } from "../../src/ports/ApplicationRepository.js"
import { getApplication, listApplicationChanges, listApplications } from "../../src/usecases/ApplicationQueries.js"
import { putApplication } from "../../src/usecases/PutApplication.js"
import { adapters } from "../support/Adapters.js"
import { appInput, applicationRecord, tenantA, tenantB } from "../support/Fixtures.js"

const encode = Schema.encodeSync(Application)

describe.each(adapters)("ApplicationRepository $name", ({ layer: adapter }) => {
  layer(adapter, { timeout: 60_000 })((it) => {
    it.effect("stores every field of an application and reads it back as written", () =>
      Effect.gen(function*() {
        yield* TestClock.adjust("1234 millis")
        yield* putApplication(tenantA, "APP-CORE", appInput({ name: "Core" }), "ops")
        const input = appInput({
          name: "Payments Hub",
          description: "Card and SEPA payments",
          parentCode: "APP-CORE",
          status: "DEPRECATED",
          dataClassification: "RESTRICTED",
          criticality: "MISSION_CRITICAL",
          rtoHours: 0.25,
          rpoHours: 0,
          regulations: "PCI_DSS,DORA",
          roleAssignments: "TECH_LEAD:tara@x.example,TECH_LEAD:theo@x.example,SECURITY_OFFICER:sam@x.example,PRODUCT_OWNER:po@x.example",
          licenseCost: Number.MAX_SAFE_INTEGER - 10,
          supportCost: null,
          infraCost: 3,
          staffCost: 7
        })
        const written = yield* putApplication(tenantA, "APP-PAY", input, "ops")
        const expected = {
          code: "APP-PAY",
          name: "Payments Hub",
          description: "Card and SEPA payments",
          parentCode: "APP-CORE",
          status: "DEPRECATED",
          dataClassification: "RESTRICTED",
          criticality: "MISSION_CRITICAL",
          rtoHours: 0.25,
          rpoHours: 0,
          regulations: "DORA,PCI_DSS",
          roleAssignments: "TECH_LEAD:tara@x.example,TECH_LEAD:theo@x.example,SECURITY_OFFICER:sam@x.example,PRODUCT_OWNER:po@x.example",
          licenseCost: Number.MAX_SAFE_INTEGER - 10,
          supportCost: null,
          infraCost: 3,
          staffCost: 7,
          annualCost: Number.MAX_SAFE_INTEGER,
          applicationVip: true,
          contactIT: "tara@x.example",
          contactMetier: "po@x.example",
          createdAt: "1970-01-01T00:00:01.234Z",
          updatedAt: "1970-01-01T00:00:01.234Z"
        }
        expect(encode(written)).toEqual(expected)
        expect(encode(yield* getApplication(tenantA, "APP-PAY"))).toEqual(expected)
      }))


    it.effect("filters with AND, regulation as a member of the list, sorted bytewise by code", () =>
      Effect.gen(function*() {
        yield* putApplication(tenantA, "APP-9", appInput({ name: "9", regulations: "NIS2", dataClassification: "PUBLIC" }), "ops")
        yield* putApplication(tenantA, "APP-10", appInput({ name: "10", regulations: "DORA,NIS2,RGPD", criticality: "LOW" }), "ops")
        yield* putApplication(tenantA, "a-lower", appInput({ name: "lower", regulations: "RGPD", status: "PLANNED", criticality: "LOW" }), "ops")
        yield* putApplication(tenantB, "APP-B", appInput({ name: "B", regulations: "NIS2" }), "ops")
        const codes = (filters: Parameters<typeof listApplications>[1]) =>
          Effect.map(listApplications(tenantA, filters), (apps) => apps.map((app) => app.code))
        expect(yield* codes({})).toEqual(["APP-10", "APP-9", "APP-CORE", "APP-PAY", "a-lower"])
        expect(yield* codes({ regulation: "NIS2" })).toEqual(["APP-10", "APP-9"])
        expect(yield* codes({ regulation: "DORA" })).toEqual(["APP-10", "APP-PAY"])
        expect(yield* codes({ regulation: "RGPD", criticality: "LOW" })).toEqual(["APP-10", "a-lower"])
        expect(yield* codes({ regulation: "RGPD", criticality: "LOW", status: "PLANNED" })).toEqual(["a-lower"])
        expect(yield* codes({ data_class: "PUBLIC" })).toEqual(["APP-9"])
        expect(yield* codes({ data_class: "RESTRICTED", criticality: "MISSION_CRITICAL", status: "DEPRECATED" })).toEqual(["APP-PAY"])
        expect(yield* codes({ regulation: "HDS" })).toEqual([])
      }))


    it.effect("orders the change log by time then by write order, newest first", () =>
      Effect.gen(function*() {
        yield* putApplication(tenantA, "APP-LOG", appInput({ name: "Log", rtoHours: 1 }), "alice")
        yield* TestClock.adjust("1 second")
        yield* putApplication(tenantA, "APP-LOG", appInput({ name: "Log", rtoHours: 2, status: "RETIRED", infraCost: 5 }), "bob")
        const entries = yield* listApplicationChanges(tenantA, "APP-LOG", undefined)
        expect(entries.map(({ changedBy, field, newValue, oldValue }) => ({ field, oldValue, newValue, changedBy }))).toEqual([
          { field: "status", oldValue: "ACTIVE", newValue: "RETIRED", changedBy: "bob" },
          { field: "infraCost", oldValue: null, newValue: "5", changedBy: "bob" },
          { field: "rtoHours", oldValue: "1", newValue: "2", changedBy: "bob" },
          { field: "status", oldValue: null, newValue: "ACTIVE", changedBy: "alice" },
          { field: "dataClassification", oldValue: null, newValue: "INTERNAL", changedBy: "alice" },
          { field: "rtoHours", oldValue: null, newValue: "1", changedBy: "alice" },
          { field: "criticality", oldValue: null, newValue: "NOMINAL", changedBy: "alice" }
        ])
        expect(new Set(entries.slice(0, 3).map((entry) => entry.changedAt.epochMillis)).size).toBe(1)
        expect((yield* listApplicationChanges(tenantA, "APP-LOG", 2)).map((entry) => entry.field)).toEqual(["status", "infraCost"])
      }))


    it.effect("reads regulations once each in the catalogue's order, role assignments in their given order", () =>
      Effect.gen(function*() {
        const applications = yield* ApplicationRepository
        const roleAssignments = [{ role: "TECH_LEAD", contact: "zoe" }, { role: "ARCHITECT", contact: "adam" }] as const
        yield* applications.insert(tenantA, applicationRecord("APP-ORDER", { regulations: ["RGPD", "DORA", "HDS"], roleAssignments }))
        const found = yield* applications.find(tenantA, "APP-ORDER")
        expect(Option.map(found, ({ regulations, roleAssignments }) => ({ regulations, roleAssignments })))
          .toEqual(Option.some({ regulations: ["DORA", "RGPD", "HDS"], roleAssignments }))
        yield* applications.update(tenantA, applicationRecord("APP-ORDER", { regulations: ["ISO_27001", "NIS2"] }))
        expect(Option.map(yield* applications.find(tenantA, "APP-ORDER"), (app) => app.regulations)).toEqual(Option.some(["NIS2", "ISO_27001"]))
      }))

    it.effect("keeps every tenant to itself: finds, ancestors, counts and change logs", () =>
      Effect.gen(function*() {
        const applications = yield* ApplicationRepository
        expect(yield* applications.ancestorCodes(tenantA, "APP-PAY")).toEqual(["APP-CORE"])
        expect(yield* applications.ancestorCodes(tenantB, "APP-PAY")).toEqual([])
        expect(yield* applications.ancestorCodes(tenantA, "APP-NONE")).toEqual([])
        expect(yield* applications.find(tenantB, "APP-PAY")).toEqual(Option.none())
        expect(yield* applications.listChanges(tenantB, "APP-LOG", 200)).toEqual([])
        expect([yield* applications.count(tenantA), yield* applications.count(tenantB)]).toEqual([7, 1])
      }))
  })
})
