import { describe, expect, layer } from "@effect/vitest"
import { walkedPosi } from "../support/Forests.js"
import { walkFunctions } from "../../src/usecases/FunctionQueries.js"
import { PosiTreeNode } from "@portfolio/domain"
import { LargeBody } from "@portfolio/platform/http"
import { Effect, Layer, Schema, Stream } from "effect"
import { EncodedReadCache } from "../../src/adapters/http/EncodedReadCache.js"
import { linkedJsons } from "../../src/adapters/http/PosiLinks.js"
import { holeCodes, posiPieces, posiTemplate } from "../../src/adapters/http/WireJson.js"
import { ApplicationRepository } from "../../src/ports/ApplicationRepository.js"

import { putApplication } from "../../src/usecases/PutApplication.js"
import { seedDemo } from "../../src/usecases/SeedDemo.js"
import { appInput, tenantA, tenantB } from "../support/Fixtures.js"
import { countingApplications } from "../support/CountingApplications.js"
import { MemoryLayer } from "../support/Memory.js"

/** The linked applications each filling read, as the storage gave them. */
const linkedRead: Array<number> = []
const CountingApplications = countingApplications("listLinkedChanged", (listed) => listed._tag === "Linked" ? listed.applications.length : 0, linkedRead)
/** The versions each filling was given: those of the applications written since the last. */
const versionsGiven: Array<number> = []
const CountingVersions = countingApplications("listLinkedChanged", (listed) => listed._tag === "Versions" ? listed.versions.length : 0, versionsGiven)
const TestLayer = Layer.mergeAll(CountingVersions.pipe(Layer.provide(CountingApplications)), EncodedReadCache.fixed(64 * 1024 * 1024)).pipe(
  Layer.provideMerge(MemoryLayer)
)

/**
 * Posi as the handler makes it (PublicHandlers.ts), and the linked applications it read. `large`:
 * filled as a template of LargeBody would be, whose applications are kept (a referential that
 * large takes seconds to encode by the schema, which each step compares with).
 */
const filled = (tenantId: string, large: boolean) =>
  Effect.gen(function*() {
    const template = yield* posiTemplate(walkFunctions(tenantId))
    expect(template.byteLength).toBeLessThan(LargeBody)
    const bytes = large ? LargeBody : template.byteLength
    const pieces = yield* Stream.runCollect(posiPieces(template, linkedJsons(tenantId, holeCodes(template, 4 * 1024), bytes), 4 * 1024))
    return { json: Buffer.concat(pieces).toString("utf8"), read: linkedRead.at(-1), given: versionsGiven.at(-1) }
  })
/** Posi as the schema encodes it: the bytes the filling must be. */
const bySchema = (tenantId: string) => Effect.map(walkedPosi(tenantId), (posi) => JSON.stringify(Schema.encodeSync(Schema.Array(PosiTreeNode))(posi)))

describe("posi's linked applications", () => {
  layer(TestLayer)((it) => {
    it.effect("after a write of one application of a large tenant, reads that one and the children it names, and copies the others", () =>
      Effect.gen(function*() {
        yield* seedDemo(tenantA, { applications: 400, functions: 900, maxDepth: 5, seed: 11 }, "ops")
        expect(yield* filled(tenantA, true)).toEqual({ json: yield* bySchema(tenantA), read: 400, given: 0 })
        const kept = (yield* EncodedReadCache).fragments(tenantA, "posi")
        expect(kept?.byCode.size).toBe(400)

        // A parent renamed: it, and each application it is the parent of (which shows its name).
        const applications = yield* ApplicationRepository
        const all = [...(yield* Stream.runCollect(applications.listLinkedChanged(tenantA, [], undefined)))].flatMap((listed) =>
          listed._tag === "Linked" ? listed.applications.map(({ application }) => application) : []
        )
        const parent = all.find((application) => all.filter((child) => child.parentCode === application.code).length >= 2)!
        const children = all.filter((child) => child.parentCode === parent.code).length
        yield* putApplication(tenantA, parent.code, appInput({ name: "Renamed é \"quoted\" \\", parentCode: parent.parentCode, criticality: "LOW" }), "ops")
        const second = yield* filled(tenantA, true)
        // Nor the versions of the others asked.
        expect(second).toEqual({ json: yield* bySchema(tenantA), read: 1 + children, given: 1 + children })
        expect(second.json).toContain("Renamed é \\\"quoted\\\" \\\\")

        // A description is not shown in posi, but moves the revision: that one is read again.
        const leaf = all.find((application) => !all.some((child) => child.parentCode === application.code))!
        yield* putApplication(tenantA, leaf.code, appInput({ name: leaf.name, parentCode: leaf.parentCode, criticality: leaf.criticality, description: "moved" }), "ops")
        expect(yield* filled(tenantA, true)).toEqual({ json: yield* bySchema(tenantA), read: 1, given: 1 })
        expect(yield* filled(tenantA, true)).toEqual({ json: yield* bySchema(tenantA), read: 0, given: 0 })
        // Another tenant's write changes nothing here.
        yield* putApplication("33333333-3333-4333-8333-333333333333", "APP-ELSEWHERE", appInput({ name: "Elsewhere" }), "ops")
        expect(yield* filled(tenantA, true)).toEqual({ json: yield* bySchema(tenantA), read: 0, given: 0 })
      }))

    it.effect("keeps nothing for a small tenant: its posi is filled from all its applications each time", () =>
      Effect.gen(function*() {
        yield* seedDemo(tenantB, { applications: 40, functions: 100, maxDepth: 3, seed: 12 }, "ops")
        expect(yield* filled(tenantB, false)).toEqual({ json: yield* bySchema(tenantB), read: 40, given: 0 })
        expect((yield* EncodedReadCache).fragments(tenantB, "posi")).toBeUndefined()
        expect(yield* filled(tenantB, false)).toEqual({ json: yield* bySchema(tenantB), read: 40, given: 0 })
      }))
  })
})
