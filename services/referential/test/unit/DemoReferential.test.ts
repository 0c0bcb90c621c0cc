import { describe, expect, it, layer } from "@effect/vitest"
import { walkedFlat } from "../support/Forests.js"
import { AssignmentRoles, Conflict, RegulationTokens, TrackedFields } from "@portfolio/domain"
import { DateTime, Effect } from "effect"
import { createHash } from "node:crypto"
import { trackedChanges } from "../../src/domain/ApplicationChanges.js"
import { annualCostOf } from "../../src/domain/ApplicationView.js"
import type { FunctionFields, FunctionLink } from "../../src/domain/FunctionRecord.js"
import type { ApplicationRecord } from "../../src/domain/ApplicationRecord.js"
import { ApplicationRepository } from "../../src/ports/ApplicationRepository.js"
import { FunctionRepository } from "../../src/ports/FunctionRepository.js"
import { ReferentialOutbox } from "../../src/ports/ReferentialOutbox.js"
import { DemoChunkSizes, demoReferentialChunks, generateDemoReferential } from "../../src/usecases/DemoReferential.js"
import { listApplicationChanges } from "../../src/usecases/ApplicationQueries.js"
import { listApplications } from "../support/ApplicationLists.js"
import { getReferentialStats } from "../../src/usecases/FunctionQueries.js"
import { seedDemo } from "../../src/usecases/SeedDemo.js"
import { tenantA, tenantB } from "../support/Fixtures.js"
import { MemoryLayer } from "../support/Memory.js"

const now = DateTime.makeUnsafe(0)
const size = { applications: 300, functions: 800, maxDepth: 5, seed: 42 }

describe("demo referential generator", () => {
  const demo = generateDemoReferential(tenantA, size, now)

  it("is deterministic by seed, and tenant-specific in its ids", () => {
    expect(generateDemoReferential(tenantA, size, now)).toEqual(demo)
    const reseeded = generateDemoReferential(tenantA, { ...size, seed: 43 }, now)
    expect(reseeded.applications.map((a) => a.name)).not.toEqual(demo.applications.map((a) => a.name))
    const otherTenant = generateDemoReferential(tenantB, size, now)
    expect(otherTenant.applications).toEqual(demo.applications)
    expect(otherTenant.functions.some((fn, i) => fn.id === demo.functions[i]!.id)).toBe(false)
  })

  it("makes, chunk by chunk and whatever the chunk sizes, the data it made when it made everything at once", () => {
    // SHA-256 of this demo's JSON (timestamps left out) from the generator before it made chunks.
    const json = JSON.stringify(demo, (key, value) => (key === "createdAt" || key === "updatedAt" ? undefined : value))
    expect(createHash("sha256").update(json).digest("hex")).toBe("d7d0e9ac66cd181957ff30aeddc37b1ba9a9fcb9ee29ac48f54a521c9f1187f8")
    const applications: Array<ApplicationRecord> = []
    const functions: Array<FunctionFields> = []
    const links: Array<FunctionLink> = []
    const tags: Array<string> = []
    for (const chunk of demoReferentialChunks(tenantA, size, now, { applications: 7, functions: 13, links: 3 })) {
      tags.push(chunk._tag)
      if (chunk._tag === "Applications") applications.push(...chunk.applications)
      else if (chunk._tag === "Functions") functions.push(...chunk.functions)
      else links.push(...chunk.links)
    }
    expect({ applications, functions, links }).toEqual(demo)
    expect(tags).toEqual([
      ...Array<string>(Math.ceil(300 / 7)).fill("Applications"),
      ...Array<string>(Math.ceil(800 / 13)).fill("Functions"),
      ...Array<string>(Math.ceil(demo.links.length / 3)).fill("Links")
    ])
  })

  it("has the requested sizes, unique codes, parents before children and at most maxDepth levels", () => {
    expect({ applications: demo.applications.length, functions: demo.functions.length }).toEqual({ applications: 300, functions: 800 })
    expect(new Set(demo.applications.map((a) => a.code)).size).toBe(300)
    expect(new Set(demo.functions.map((f) => f.code)).size).toBe(800)
    const level = new Map<string, number>()
    for (const fn of demo.functions) {
      const parentLevel = fn.parentId === null ? 0 : level.get(fn.parentId)
      expect(parentLevel).toBeDefined()
      level.set(fn.id, parentLevel! + 1)
    }
    expect(Math.max(...level.values())).toBe(5)
    const seen = new Set<string>()
    for (const app of demo.applications) {
      if (app.parentCode !== null) expect(seen.has(app.parentCode)).toBe(true)
      seen.add(app.code)
    }
    expect(demo.functions.every((fn) => fn.code.length <= 64)).toBe(true)
  })

  it("exercises every enum value, token, role, cost shape and derivation", () => {
    const apps = demo.applications
    const values = <K extends keyof (typeof apps)[number]>(key: K) => new Set(apps.map((a) => a[key]))
    expect(values("status")).toEqual(new Set(["ACTIVE", "PLANNED", "DEPRECATED", "RETIRED"]))
    expect(values("dataClassification")).toEqual(new Set(["PUBLIC", "INTERNAL", "CONFIDENTIAL", "RESTRICTED"]))
    expect(values("criticality")).toEqual(new Set(["MISSION_CRITICAL", "IMPORTANT", "NOMINAL", "LOW"]))
    expect(new Set(apps.flatMap((a) => a.regulations))).toEqual(new Set(RegulationTokens))
    expect(new Set(apps.flatMap((a) => a.roleAssignments.map((pair) => pair.role)))).toEqual(new Set(AssignmentRoles))
    expect(apps.some((a) => a.parentCode !== null)).toBe(true)
    expect(apps.some((a) => a.description === null) && apps.some((a) => a.description !== null)).toBe(true)
    expect(apps.some((a) => a.rtoHours !== null && !Number.isInteger(a.rtoHours))).toBe(true)
    expect(apps.some((a) => a.rtoHours === null)).toBe(true)
    // annualCost from the split costs, from the legacy amount alone, and unknown.
    expect(apps.some((a) => a.licenseCost !== null && a.legacyAnnualCost === null)).toBe(true)
    expect(apps.some((a) => a.legacyAnnualCost !== null && annualCostOf(a) === a.legacyAnnualCost)).toBe(true)
    expect(apps.some((a) => annualCostOf(a) === null)).toBe(true)
    // contactIT from several TECH_LEADs, contactMetier, and applications without any contact.
    expect(apps.some((a) => a.roleAssignments.filter((p) => p.role === "TECH_LEAD").length > 1)).toBe(true)
    expect(apps.some((a) => a.roleAssignments.some((p) => p.role === "PRODUCT_OWNER"))).toBe(true)
    expect(apps.some((a) => a.roleAssignments.length === 0)).toBe(true)
    expect(apps.every((a) => new Set(a.roleAssignments.map((p) => `${p.role}:${p.contact}`)).size === a.roleAssignments.length)).toBe(true)
    const linked = new Set(demo.links.map((l) => l.applicationCode))
    expect(apps.some((a) => !linked.has(a.code))).toBe(true)
    expect(demo.functions.some((f) => !demo.links.some((l) => l.functionId === f.id))).toBe(true)
    expect(new Set(demo.links.map((l) => `${l.functionId}/${l.applicationCode}`)).size).toBe(demo.links.length)
  })
})

describe("seedDemo", () => {
  layer(MemoryLayer)((it) => {
    it.effect("fills an empty tenant, creation entries included", () =>
      Effect.gen(function*() {
        const result = yield* seedDemo(tenantA, size, "ops")
        const expected = generateDemoReferential(tenantA, size, now)
        expect({ ...result }).toEqual({ applications: 300, functions: 800, links: expected.links.length })
        expect((yield* listApplications(tenantA, {})).length).toBe(300)
        expect((yield* walkedFlat(tenantA)).length).toBe(800)
        expect((yield* getReferentialStats(tenantA)).maxDepth).toBe(5)
        const entries = yield* listApplicationChanges(tenantA, "APP-0001", undefined)
        const first = expected.applications[0]!
        expect(entries.map((entry) => entry.field)).toEqual(expect.arrayContaining(["criticality", "dataClassification", "regulations", "status"]))
        expect(entries.map((entry) => ({ field: entry.field, newValue: entry.newValue })).sort((a, b) => a.field.localeCompare(b.field)))
          .toEqual(trackedChanges(undefined, first).map(({ field, newValue }) => ({ field, newValue })).sort((a, b) => a.field.localeCompare(b.field)))
        expect(entries.every((entry) => entry.oldValue === null && entry.changedBy === "ops")).toBe(true)
      }))

    it.effect("writes the demo a chunk at a time (applications with their entries and events, functions, links), never all of it at once", () =>
      Effect.gen(function*() {
        const tenantC = "33333333-3333-4333-8333-333333333333"
        const big = { applications: 2_500, functions: 11_000, maxDepth: 6, seed: 7 }
        const writes: Array<{ readonly what: string; readonly rows: number }> = []
        const wrote = (what: string, rows: number) => Effect.sync(() => void writes.push({ what, rows }))
        const applications = yield* ApplicationRepository
        const functions = yield* FunctionRepository
        const events = yield* ReferentialOutbox
        const result = yield* seedDemo(tenantC, big, "ops").pipe(
          Effect.provideService(ApplicationRepository, {
            ...applications,
            insertMany: (tenantId, records) => Effect.andThen(wrote("applications", records.length), applications.insertMany(tenantId, records)),
            appendChanges: (tenantId, entries) => Effect.andThen(wrote("changes", entries.length), applications.appendChanges(tenantId, entries))
          }),
          Effect.provideService(FunctionRepository, {
            ...functions,
            insertMany: (tenantId, fns) => Effect.andThen(wrote("functions", fns.length), functions.insertMany(tenantId, fns)),
            insertLinks: (tenantId, links) => Effect.andThen(wrote("links", links.length), functions.insertLinks(tenantId, links))
          }),
          Effect.provideService(ReferentialOutbox, { append: (created) => Effect.andThen(wrote("events", created.length), events.append(created)) })
        )
        // An application's rows, entries and event go together, a chunk at a time; then the functions, then the links.
        expect(writes.map(({ what }) => what)).toEqual([
          ...["applications", "changes", "events", "applications", "changes", "events", "applications", "changes", "events"],
          ...["functions", "functions", "functions", "links", "links"]
        ])
        const rows = (what: string) => writes.filter((write) => write.what === what).map((write) => write.rows)
        expect(rows("applications")).toEqual([DemoChunkSizes.applications, DemoChunkSizes.applications, 500])
        expect(rows("events")).toEqual(rows("applications"))
        expect(rows("functions")).toEqual([DemoChunkSizes.functions, DemoChunkSizes.functions, 1_000])
        expect(rows("links")).toEqual([DemoChunkSizes.links, result.links - DemoChunkSizes.links])
        expect(Math.max(...rows("changes"))).toBeLessThanOrEqual(DemoChunkSizes.applications * TrackedFields.length)
        expect({ ...result }).toEqual({ applications: 2_500, functions: 11_000, links: generateDemoReferential(tenantC, big, now).links.length })
      }))

    it.effect("refuses a tenant that already has applications, saying so", () =>
      Effect.gen(function*() {
        expect(yield* Effect.flip(seedDemo(tenantA, size, "ops"))).toEqual(
          new Conflict({
            detail: `Tenant ${tenantA} already has 300 applications and 800 business functions; the demo seed only fills an empty referential.`
          })
        )
        const empty = yield* seedDemo(tenantB, { applications: 0, functions: 0, maxDepth: 1, seed: 1 }, "ops")
        expect({ ...empty }).toEqual({ applications: 0, functions: 0, links: 0 })
      }))
  })
})
