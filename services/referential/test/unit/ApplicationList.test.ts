import { describe, expect, layer } from "@effect/vitest"
import { Application } from "@portfolio/domain"
import { LargeBody } from "@portfolio/platform/http"
import { DateTime, Effect, Layer, Schema } from "effect"
import { wholeApplicationList } from "../../src/adapters/http/ApplicationList.js"
import { EncodedReadCache } from "../../src/adapters/http/EncodedReadCache.js"
import { ApplicationRepository } from "../../src/ports/ApplicationRepository.js"
import { listApplications } from "../support/ApplicationLists.js"
import { generateDemoReferential } from "../../src/usecases/DemoReferential.js"
import { putApplication } from "../../src/usecases/PutApplication.js"
import { appInput, tenantA, tenantB } from "../support/Fixtures.js"
import { countingApplications } from "../support/CountingApplications.js"
import { MemoryLayer } from "../support/Memory.js"

/** The records each list read, as the storage gave them. */
const recordsRead: Array<number> = []
const CountingApplications = countingApplications("listAllChanged", (listed) => listed._tag === "Records" ? listed.records.length : 0, recordsRead)
const TestLayer = Layer.mergeAll(CountingApplications, EncodedReadCache.fixed(64 * 1024 * 1024)).pipe(Layer.provideMerge(MemoryLayer))

const text = (pieces: Iterable<Uint8Array>) => Buffer.concat([...pieces]).toString("utf8")
/** The list as the schema encodes it: the bytes the whole list must be. */
const bySchema = (tenantId: string, filters: Parameters<typeof listApplications>[1] = {}) =>
  Effect.map(listApplications(tenantId, filters), (applications) => JSON.stringify(Schema.encodeSync(Schema.Array(Application))(applications)))
/** The list's text, and the records it read (taken before `bySchema` reads the list its own way). */
const listed = (tenantId: string, filters: Parameters<typeof listApplications>[1] = {}) =>
  Effect.map(wholeApplicationList(tenantId, filters), (pieces) => ({ json: text(pieces), read: recordsRead.at(-1) }))

describe("the whole application list", () => {
  layer(TestLayer)((it) => {
    it.effect("after a write of one application of a large tenant, reads that one record and copies the others", () =>
      Effect.gen(function*() {
        const demo = generateDemoReferential(tenantA, { applications: 2_500, functions: 10, maxDepth: 2, seed: 5 }, DateTime.makeUnsafe("2026-11-30T12:00:00.000Z"))
        yield* (yield* ApplicationRepository).insertMany(tenantA, demo.applications)
        const first = yield* listed(tenantA)
        expect(Buffer.byteLength(first.json)).toBeGreaterThan(LargeBody)
        expect(first).toEqual({ json: yield* bySchema(tenantA), read: 2_500 })
        const kept = (yield* EncodedReadCache).fragments(tenantA, "list")
        expect(kept?.byCode.size).toBe(2_500)
        // Counted with what each fragment costs beside its JSON.
        expect(kept!.bytes).toBeGreaterThan(Buffer.byteLength(first.json) + 2_500 * 200)

        // The fragments of a making are kept once its last piece is taken, not before its first.
        const cache = yield* EncodedReadCache
        yield* putApplication(tenantA, demo.applications[7]!.code, appInput({ name: "Seventh", criticality: "LOW" }), "ops")
        const pieces = (yield* wholeApplicationList(tenantA, {}))[Symbol.iterator]()
        expect(pieces.next().done).toBe(false)
        expect(cache.fragments(tenantA, "list")).toBe(kept)
        while (!pieces.next().done) continue
        expect(cache.fragments(tenantA, "list")).not.toBe(kept)

        const renamed = demo.applications[1_234]!.code
        yield* putApplication(tenantA, renamed, appInput({ name: "Renamed é \"quoted\" \\", criticality: "LOW" }), "ops")
        const second = yield* listed(tenantA)
        expect(second).toEqual({ json: yield* bySchema(tenantA), read: 1 })
        expect(second.json).toContain("Renamed é \\\"quoted\\\" \\\\")

        // A new application, and a filtered list, from the same fragments.
        yield* putApplication(tenantA, "ZZ-NEW", appInput({ name: "new", criticality: "LOW" }), "ops")
        expect(yield* listed(tenantA, { criticality: "LOW" })).toEqual({ json: yield* bySchema(tenantA, { criticality: "LOW" }), read: 1 })
        expect(yield* listed(tenantA)).toEqual({ json: yield* bySchema(tenantA), read: 0 })
      }))

    it.effect("keeps nothing for a small tenant: its list is made from its records each time", () =>
      Effect.gen(function*() {
        yield* putApplication(tenantB, "B-1", appInput({ name: "one" }), "ops")
        yield* putApplication(tenantB, "B-2", appInput({ name: "two" }), "ops")
        expect(yield* listed(tenantB)).toEqual({ json: yield* bySchema(tenantB), read: 2 })
        expect(yield* listed(tenantB)).toEqual({ json: yield* bySchema(tenantB), read: 2 })
        expect((yield* EncodedReadCache).fragments(tenantB, "list")).toBeUndefined()
        expect(yield* listed(tenantB, { status: "RETIRED" })).toEqual({ json: "[]", read: 0 })
      }))
  })

  // A quarter of 4 MiB for the fragments: less than a 2,500-application tenant's.
  layer(Layer.mergeAll(CountingApplications, EncodedReadCache.fixed(4 * 1024 * 1024)).pipe(Layer.provideMerge(MemoryLayer)))((it) => {
    it.effect("keeps nothing for a tenant whose fragments exceed their share of the budget", () =>
      Effect.gen(function*() {
        const demo = generateDemoReferential(tenantA, { applications: 2_500, functions: 10, maxDepth: 2, seed: 6 }, DateTime.makeUnsafe("2026-11-30T12:00:00.000Z"))
        yield* (yield* ApplicationRepository).insertMany(tenantA, demo.applications)
        expect(yield* listed(tenantA)).toEqual({ json: yield* bySchema(tenantA), read: 2_500 })
        expect((yield* EncodedReadCache).fragments(tenantA, "list")).toBeUndefined()
        expect(yield* listed(tenantA)).toEqual({ json: yield* bySchema(tenantA), read: 2_500 })
      }))
  })
})
