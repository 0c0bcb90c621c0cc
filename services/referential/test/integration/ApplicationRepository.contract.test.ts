import { describe, expect, layer } from "@effect/vitest"
import { SqlClient } from "effect/sql"
import { Application } from "@portfolio/domain"
import { Clock, Effect, Option, Schema, Stream } from "effect"
import { TestClock } from "effect/testing"
import { ApplicationRepository, linkedVersion } from "../../src/ports/ApplicationRepository.js"
import {
  getApplication,
  listApplicationChanges,
  listApplicationChangesPage,
  listApplicationsPage
} from "../../src/usecases/ApplicationQueries.js"
import { listApplications } from "../support/ApplicationLists.js"
import { putApplication } from "../../src/usecases/PutApplication.js"
import { adapters } from "../support/Adapters.js"
import { allPages } from "../support/Pages.js"
import { appInput, applicationRecord, tenantA, tenantB } from "../support/Fixtures.js"

const encode = Schema.encodeSync(Application)
const tenantP = "55555555-5555-4555-8555-555555555555"
const tenantM = "66666666-6666-4666-8666-666666666666"
const tenantQ = "77777777-7777-4777-8777-777777777777"

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
        // The whole list is read and decoded apart from a single application: the same answers.
        const encode = Schema.encodeSync(Application)
        for (const listed of yield* listApplications(tenantA, {})) {
          expect(encode(listed)).toEqual(encode(yield* getApplication(tenantA, listed.code)))
        }
        const applications = yield* ApplicationRepository
        // Against what the caller holds: every matching code and revision in order, then the
        // records of the others in batches of at most `size`, each as a single read gives it.
        const revisions = new Map<string, number>()
        for (const code of ["APP-10", "APP-9", "APP-CORE", "APP-PAY", "a-lower"]) revisions.set(code, Option.getOrThrow(yield* applications.find(tenantA, code)).revision)
        const changed = (filters: Parameters<typeof listApplications>[1], held: ReadonlyMap<string, number>, size: number) =>
          Effect.gen(function*() {
            const [first, ...rest] = yield* Stream.runCollect(applications.listAllChanged(tenantA, filters, (code, revision) => held.get(code) === revision, size))
            const records = rest.map((listed) => listed._tag === "Records" ? listed.records : [])
            for (const record of records.flat()) expect(Option.getOrThrow(yield* applications.find(tenantA, record.code))).toEqual(record)
            return {
              order: first?._tag === "Order" ? first.order.map((entry) => `${entry.code}@${entry.revision}`) : first,
              sizes: records.map((batch) => batch.length),
              records: records.flat().map((record) => record.code).sort()
            }
          })
        const all = [...revisions].map(([code, revision]) => `${code}@${revision}`)
        expect(yield* changed({}, new Map(), 2)).toEqual({ order: all, sizes: [2, 2, 1], records: ["APP-10", "APP-9", "APP-CORE", "APP-PAY", "a-lower"] })
        expect(yield* changed({}, revisions, 2)).toEqual({ order: all, sizes: [], records: [] })
        const stale = new Map([...revisions, ["APP-PAY", revisions.get("APP-PAY")! - 1]])
        expect(yield* changed({}, stale, 2)).toEqual({ order: all, sizes: [1], records: ["APP-PAY"] })
        expect(yield* changed({ regulation: "RGPD" }, new Map(), 5)).toEqual({
          order: [`APP-10@${revisions.get("APP-10")}`, `a-lower@${revisions.get("a-lower")}`],
          sizes: [2],
          records: ["APP-10", "a-lower"]
        })
        expect(yield* changed({ regulation: "HDS" }, new Map(), 5)).toEqual({ order: [], sizes: [], records: [] })
        // Posi's applications against what the caller holds: the tenant's write sequence first,
        // then, holding nothing, every application, the named ones first (a name of none is
        // none), each with its parent's name whichever batch the parent is in; holding, the
        // versions of those written since and of their children, then those not held at it.
        const versionOf = (code: string) =>
          Effect.gen(function*() {
            const record = Option.getOrThrow(yield* applications.find(tenantA, code))
            const parent = record.parentCode === null ? null : Option.getOrThrow(yield* applications.find(tenantA, record.parentCode)).revision
            return linkedVersion(record.revision, parent)
          })
        const linked = (first: ReadonlyArray<string>, holding: { readonly writeSeq: number; readonly versions: ReadonlyMap<string, string> } | undefined) =>
          Effect.gen(function*() {
            const all = yield* Stream.runCollect(applications.listLinkedChanged(tenantA, first, holding && {
              writeSeq: holding.writeSeq,
              held: (code, version) => holding.versions.get(code) === version
            }))
            const [head, ...rest] = all
            if (head?._tag !== "WriteSeq") return expect.unreachable("the write sequence comes first")
            const listed = rest.filter((batch) => batch._tag === "Versions")
            const versions = new Map(listed.flatMap((batch) => batch.versions.map(({ code, version }) => [code, version] as const)))
            // Holding nothing, no versions given: each application comes with its own.
            expect(listed.length).toBeLessThanOrEqual(1)
            expect(rest.indexOf(listed[0]!)).toBe(listed.length === 0 ? -1 : 0)
            const batches = rest.flatMap((batch) => batch._tag === "Linked" ? [batch.applications] : [])
            for (const { application, version } of batches.flat()) {
              expect(version).toBe(yield* versionOf(application.code))
              if (listed.length > 0) expect(versions.get(application.code)).toBe(version)
            }
            return {
              writeSeq: head.writeSeq,
              given: listed.length > 0,
              versions,
              batches: batches.map((batch) => batch.map(({ application: a }) => `${a.code}<${a.parentName ?? ""}`).sort())
            }
          })
        const versions = new Map<string, string>()
        for (const code of revisions.keys()) versions.set(code, yield* versionOf(code))
        const cold = yield* linked(["APP-PAY", "APP-NONE", "APP-B"], undefined)
        expect(cold).toMatchObject({ given: false, batches: [["APP-PAY<Core"], ["APP-10<", "APP-9<", "APP-CORE<", "a-lower<"]] })
        expect((yield* linked([], undefined)).batches).toEqual([["APP-10<", "APP-9<", "APP-CORE<", "APP-PAY<Core", "a-lower<"]])
        // Nothing written since: nothing asked, whatever is held (the caller's own).
        const since = cold.writeSeq
        expect(yield* linked(["APP-PAY"], { writeSeq: since, versions })).toEqual({ writeSeq: since, given: true, versions: new Map(), batches: [] })
        expect((yield* linked([], { writeSeq: since, versions: new Map() })).batches).toEqual([])
        // Another tenant's writes are not this one's.
        yield* putApplication(tenantB, "APP-B", appInput({ name: "B again" }), "ops")
        expect(yield* linked([], { writeSeq: since, versions })).toEqual({ writeSeq: since, given: true, versions: new Map(), batches: [] })
        // A parent renamed: its version moves, and its child's with it (the child shows its name).
        yield* putApplication(tenantA, "APP-CORE", appInput({ name: "Core renamed" }), "ops")
        const renamed = yield* linked([], { writeSeq: since, versions })
        expect(renamed.writeSeq).toBeGreaterThan(since)
        expect(renamed.batches).toEqual([["APP-CORE<", "APP-PAY<Core renamed"]])
        expect([...renamed.versions.keys()].sort()).toEqual(["APP-CORE", "APP-PAY"])
        expect(renamed.versions.get("APP-PAY")).not.toBe(versions.get("APP-PAY"))
        // Held at their new versions (another making kept them): given, not read.
        const current = new Map([...versions, ...renamed.versions])
        expect(yield* linked([], { writeSeq: since, versions: current })).toMatchObject({ versions: renamed.versions, batches: [] })
        // A new application and another written: those posi's first piece shows first.
        yield* putApplication(tenantA, "APP-NEW", appInput({ name: "New", parentCode: "APP-9" }), "ops")
        yield* putApplication(tenantA, "APP-9", appInput({ name: "9 renamed", regulations: "NIS2", dataClassification: "PUBLIC" }), "ops")
        const passes = (yield* Stream.runCollect(applications.listLinkedChanged(tenantA, ["APP-9", "APP-NONE"], { writeSeq: renamed.writeSeq, held: (code, version) => current.get(code) === version })))
          .map((batch) =>
            batch._tag === "WriteSeq"
              ? batch._tag
              : `${batch._tag}: ${(batch._tag === "Versions" ? batch.versions.map(({ code }) => code) : batch.applications.map(({ application }) => application.code)).sort().join(" ")}`
          )
        expect(passes).toEqual(["WriteSeq", "Versions: APP-9 APP-NEW", "Linked: APP-9", "Linked: APP-NEW"])
        // A sequence below the one held (a database restored under the process): nothing held is trusted.
        const restored = yield* linked(["APP-PAY"], { writeSeq: Number.MAX_SAFE_INTEGER, versions: current })
        expect(restored).toMatchObject({ given: false, batches: [["APP-PAY<Core renamed"], ["APP-10<", "APP-9<", "APP-CORE<", "APP-NEW<9 renamed", "a-lower<"]] })
      }))


    it.effect("orders the change log by time then by write order, newest first", () =>
      Effect.gen(function*() {
        yield* TestClock.adjust("567 millis")
        const aliceAt = yield* Clock.currentTimeMillis
        yield* putApplication(tenantA, "APP-LOG", appInput({ name: "Log", rtoHours: 1 }), "alice")
        yield* TestClock.adjust("1 second")
        yield* putApplication(tenantA, "APP-LOG", appInput({ name: "Log", rtoHours: 2, status: "RETIRED", infraCost: 5 }), "bob")
        const entries = yield* listApplicationChanges(tenantA, "APP-LOG", undefined)
        // Each entry at its write's time, to the millisecond.
        expect(entries.map((entry) => entry.changedAt.epochMilliseconds)).toEqual([...Array(3).fill(aliceAt + 1000), ...Array(4).fill(aliceAt)])
        expect(entries.map(({ changedBy, field, newValue, oldValue }) => ({ field, oldValue, newValue, changedBy }))).toEqual([
          { field: "status", oldValue: "ACTIVE", newValue: "RETIRED", changedBy: "bob" },
          { field: "infraCost", oldValue: null, newValue: "5", changedBy: "bob" },
          { field: "rtoHours", oldValue: "1", newValue: "2", changedBy: "bob" },
          { field: "status", oldValue: null, newValue: "ACTIVE", changedBy: "alice" },
          { field: "dataClassification", oldValue: null, newValue: "INTERNAL", changedBy: "alice" },
          { field: "rtoHours", oldValue: null, newValue: "1", changedBy: "alice" },
          { field: "criticality", oldValue: null, newValue: "NOMINAL", changedBy: "alice" }
        ])
        expect(new Set(entries.slice(0, 3).map((entry) => entry.changedAt.epochMilliseconds)).size).toBe(1)
        expect((yield* listApplicationChanges(tenantA, "APP-LOG", 2)).map((entry) => entry.field)).toEqual(["status", "infraCost"])
      }))


    it.effect("keeps each tenant's change log of the same code to itself, its pages included", () =>
      Effect.gen(function*() {
        const applications = yield* ApplicationRepository
        const [one, other] = ["88888888-8888-4888-8888-888888888888", "99999999-9999-4999-8999-999999999999"]
        yield* putApplication(one, "APP-TWIN", appInput({ name: "Twin", rtoHours: 1 }), "one")
        yield* putApplication(other, "APP-TWIN", appInput({ name: "Twin", rtoHours: 2 }), "other")
        yield* TestClock.adjust("1 second")
        yield* putApplication(other, "APP-TWIN", appInput({ name: "Twin", rtoHours: 3 }), "other")
        const logOf = (tenantId: string) => Effect.map(applications.listChanges(tenantId, "APP-TWIN", 200), Option.getOrThrow)
        const ones = yield* logOf(one)
        const others = yield* logOf(other)
        expect(new Set(ones.map((entry) => entry.changedBy))).toEqual(new Set(["one"]))
        expect(new Set(others.map((entry) => entry.changedBy))).toEqual(new Set(["other"]))
        expect(others.length).toBe(ones.length + 1)
        // After a cursor taken from one tenant's log, the other tenant's entries do not come back.
        const newestOfOther = others[0]!
        const after = { changedAtMillis: newestOfOther.changedAt.epochMilliseconds, id: newestOfOther.id }
        const rest = Option.getOrThrow(yield* applications.listChanges(other, "APP-TWIN", 200, after))
        expect(rest.map((entry) => entry.id)).toEqual(others.slice(1).map((entry) => entry.id))
        const crossed = Option.getOrThrow(yield* applications.listChanges(one, "APP-TWIN", 200, after))
        expect(crossed.every((entry) => entry.changedBy === "one")).toBe(true)
      }))

    it.effect("tells an application without entries (an empty log) from no application at all", () =>
      Effect.gen(function*() {
        const applications = yield* ApplicationRepository
        yield* applications.insert(tenantQ, applicationRecord("APP-QUIET"))
        expect(yield* applications.listChanges(tenantQ, "APP-QUIET", 50)).toEqual(Option.some([]))
        expect(yield* applications.listChanges(tenantQ, "APP-QUIET", 50, { changedAtMillis: Date.now(), id: "00000000-0000-4000-8000-000000000000" }))
          .toEqual(Option.some([]))
        expect(yield* applications.listChanges(tenantQ, "APP-NONE", 50)).toEqual(Option.none())
      }))

    it.effect("reads regulations once each in the catalogue's order, role assignments in their given order", () =>
      Effect.gen(function*() {
        const applications = yield* ApplicationRepository
        const roleAssignments = [{ role: "TECH_LEAD", contact: "zoe" }, { role: "ARCHITECT", contact: "adam" }] as const
        yield* applications.insert(tenantA, applicationRecord("APP-ORDER", { regulations: ["RGPD", "DORA", "HDS"], roleAssignments }))
        const found = yield* applications.find(tenantA, "APP-ORDER")
        expect(Option.map(found, ({ regulations, roleAssignments }) => ({ regulations, roleAssignments })))
          .toEqual(Option.some({ regulations: ["DORA", "RGPD", "HDS"], roleAssignments }))
        yield* applications.update(tenantA, applicationRecord("APP-ORDER", { regulations: ["ISO_27001", "NIS2"] }), Option.getOrThrow(found))
        expect(Option.map(yield* applications.find(tenantA, "APP-ORDER"), (app) => app.regulations)).toEqual(Option.some(["NIS2", "ISO_27001"]))
      }))

    it.effect("an update rewrites a multi-valued field only when it changed", () =>
      Effect.gen(function*() {
        const applications = yield* ApplicationRepository
        // PostgreSQL's rows say whether they were written again: an UPDATE or a DELETE and INSERT
        // gives a row a new physical place (ctid). The memory adapter keeps no rows to tell.
        const sql = yield* Effect.serviceOption(SqlClient.SqlClient)
        const placesOf = (rows: (client: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<{ readonly ctid: string }>, unknown>) =>
          Option.isNone(sql) ? Effect.succeed(undefined) : Effect.orDie(Effect.map(rows(sql.value), (found) => found.map((row) => row.ctid)))
        const places = Effect.all({
          regulations: placesOf((client) =>
            client`SELECT ctid::text FROM referential.application_regulations WHERE tenant_id = ${tenantM} AND application_code = 'APP-MULTI' ORDER BY ctid`
          ),
          roles: placesOf((client) =>
            client`SELECT ctid::text FROM referential.application_role_assignments WHERE tenant_id = ${tenantM} AND application_code = 'APP-MULTI' ORDER BY ctid`
          )
        })
        const roles = [{ role: "TECH_LEAD", contact: "zoe" }] as const
        const first = applicationRecord("APP-MULTI", { regulations: ["DORA", "RGPD"], roleAssignments: roles })
        yield* applications.insert(tenantM, first)
        const before = yield* places
        const renamed = applicationRecord("APP-MULTI", { name: "Renamed", regulations: ["DORA", "RGPD"], roleAssignments: roles })
        yield* applications.update(tenantM, renamed, first)
        expect(yield* places).toEqual(before)
        expect(Option.map(yield* applications.find(tenantM, "APP-MULTI"), ({ name, regulations, roleAssignments }) => ({ name, regulations, roleAssignments })))
          .toEqual(Option.some({ name: "Renamed", regulations: ["DORA", "RGPD"], roleAssignments: roles }))
        const reassigned = applicationRecord("APP-MULTI", { name: "Renamed", regulations: ["DORA", "RGPD"], roleAssignments: [{ role: "ARCHITECT", contact: "adam" }] })
        yield* applications.update(tenantM, reassigned, renamed)
        // The roles rewritten, the regulations left where they were.
        const reassignedPlaces = yield* places
        expect(reassignedPlaces.regulations).toEqual(before.regulations)
        if (before.roles !== undefined) expect(reassignedPlaces.roles).not.toEqual(before.roles)
        const regulated = applicationRecord("APP-MULTI", { name: "Renamed", regulations: ["NIS2"], roleAssignments: [{ role: "ARCHITECT", contact: "adam" }] })
        yield* applications.update(tenantM, regulated, reassigned)
        expect(Option.map(yield* applications.find(tenantM, "APP-MULTI"), ({ regulations, roleAssignments }) => ({ regulations, roleAssignments })))
          .toEqual(Option.some({ regulations: ["NIS2"], roleAssignments: [{ role: "ARCHITECT", contact: "adam" }] }))
      }))

    it.effect("pages the application list by code after the cursor's code, filters kept, nothing shifted by a write", () =>
      Effect.gen(function*() {
        const applications = yield* ApplicationRepository
        const codes = Array.from({ length: 25 }, (_, i) => `P-${String(i).padStart(3, "0")}`)
        yield* applications.insertMany(tenantP, codes.map((code, i) => applicationRecord(code, { status: i % 3 === 0 ? "RETIRED" : "ACTIVE" })))
        const whole = (yield* listApplications(tenantP, {})).map((app) => app.code)
        const paged = yield* allPages((cursor) => listApplicationsPage(tenantP, {}, { limit: 10, cursor }))
        expect({ codes: paged.items.map((app) => app.code), pages: paged.pages }).toEqual({ codes: whole, pages: 3 })
        const retired = (yield* listApplications(tenantP, { status: "RETIRED" })).map((app) => app.code)
        const pagedRetired = yield* allPages((cursor) => listApplicationsPage(tenantP, { status: "RETIRED" }, { limit: 4, cursor }))
        expect(pagedRetired.items.map((app) => app.code)).toEqual(retired)

        const first = yield* listApplicationsPage(tenantP, {}, { limit: 10 })
        yield* applications.insert(tenantP, applicationRecord("P-000a"))
        const second = yield* listApplicationsPage(tenantP, {}, { limit: 10, cursor: Option.getOrThrow(first.next) })
        expect(second.items.map((app) => app.code)).toEqual(codes.slice(10, 20))
        const refused = yield* Effect.flip(listApplicationsPage(tenantP, { status: "ACTIVE" }, { limit: 10, cursor: Option.getOrThrow(first.next) }))
        expect(refused.detail).toMatch(/^invalid cursor/)
      }))

    it.effect("pages a change log across entries of the same time in write order, newest first", () =>
      Effect.gen(function*() {
        yield* putApplication(tenantP, "P-LOG", appInput({ name: "Log", rtoHours: 1 }), "alice")
        for (let hours = 2; hours <= 6; hours++) {
          yield* TestClock.adjust("1 second")
          yield* putApplication(tenantP, "P-LOG", appInput({ name: "Log", rtoHours: hours, infraCost: hours, supportCost: hours }), "bob")
        }
        const whole = yield* listApplicationChanges(tenantP, "P-LOG", 200)
        expect(whole.length).toBeGreaterThan(12)
        for (const limit of [1, 2, 3, 5]) {
          const paged = yield* allPages((cursor) => listApplicationChangesPage(tenantP, "P-LOG", { limit, cursor }))
          expect(paged.items.map((entry) => entry.id)).toEqual(whole.map((entry) => entry.id))
        }
        const first = yield* listApplicationChangesPage(tenantP, "P-LOG", { limit: 2 })
        const elsewhere = yield* Effect.flip(listApplicationChangesPage(tenantP, "P-0001", { cursor: Option.getOrThrow(first.next) }))
        expect(elsewhere.detail).toMatch(/^invalid cursor/)
      }))

    it.effect("keeps every tenant to itself: finds, ancestors, counts and change logs", () =>
      Effect.gen(function*() {
        const applications = yield* ApplicationRepository
        expect(yield* applications.ancestorCodes(tenantA, "APP-PAY")).toEqual(["APP-CORE"])
        expect(yield* applications.ancestorCodes(tenantB, "APP-PAY")).toEqual([])
        expect(yield* applications.ancestorCodes(tenantA, "APP-NONE")).toEqual([])
        expect(yield* applications.find(tenantB, "APP-PAY")).toEqual(Option.none())
        expect([yield* applications.exists(tenantA, "APP-PAY"), yield* applications.exists(tenantB, "APP-PAY"), yield* applications.exists(tenantB, "APP-B")])
          .toEqual([true, false, true])
        // Codes compare bytewise, as everywhere: another case is another code.
        expect(yield* applications.exists(tenantA, "app-pay")).toBe(false)
        // Tenant A's APP-LOG has entries; tenant B has no such application.
        expect(yield* applications.listChanges(tenantB, "APP-LOG", 200)).toEqual(Option.none())
        expect([yield* applications.count(tenantA), yield* applications.count(tenantB)]).toEqual([8, 1])
      }))
  })
})
