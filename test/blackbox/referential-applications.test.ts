import { beforeAll, describe, expect, it } from "vitest"
import { expectProblem } from "../support/problem.js"
import {
  applyFilter,
  auditUpdates,
  bulkCode,
  bulkUpdates,
  comparable,
  expectedRead,
  isoTimestamp,
  tenantAExpected,
  type ApplicationFilter
} from "../support/referential-data.js"
import { seedReferential } from "../support/referential-seed.js"
import type { CreatedPat, CreatedTenant } from "../support/system.js"
import { useSharedSystem } from "../support/useSystem.js"

// Many requests per PAT here; the 180/min default is the subject of rate-limit.test.ts.
const system = useSharedSystem()

let tenantA: CreatedTenant
let readA: CreatedPat

const apps = "/referentiel/applications"
const path = (p: string) => `/api/v1${p}`

beforeAll(async () => {
  ;({ tenantA, readA } = await seedReferential(system, "bb-applications"))
  // Some twenty CLI processes on a two-core machine: allow for a busy one.
}, 240_000)

describe("applications", () => {
  it("lists every application of the tenant, sorted by code, with their full bodies", async () => {
    const reply = await system.api(readA.token).get(apps)
    expect(reply.status).toBe(200)
    expect(reply.contentType).toMatch(/^application\/json/)
    expect(reply.body.map(comparable)).toEqual(tenantAExpected.map((app) => expectedRead(app, expect)))
  })

  it("reads each application with the extension, derived and deprecated fields", async () => {
    for (const app of tenantAExpected) {
      const reply = await system.api(readA.token).get(`${apps}/${app.code}`)
      expect({ code: app.code, status: reply.status }).toEqual({ code: app.code, status: 200 })
      expect(comparable(reply.body)).toEqual(expectedRead(app, expect))
      expect(Date.parse(reply.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(reply.body.createdAt))
    }
  })

  it("maps the deprecated fields of a legacy put and derives annualCost", async () => {
    const legacy = await system.api(readA.token).get(`${apps}/APP-LEGACY`)
    expect({
      criticality: legacy.body.criticality,
      licenseCost: legacy.body.licenseCost,
      annualCost: legacy.body.annualCost,
      applicationVip: legacy.body.applicationVip,
      contactIT: legacy.body.contactIT,
      contactMetier: legacy.body.contactMetier,
      roles: legacy.body.roleAssignments.split(",").sort()
    }).toEqual({
      criticality: "MISSION_CRITICAL",
      licenseCost: 90_000,
      annualCost: 90_000,
      applicationVip: true,
      contactIT: "ivan@bank.example",
      contactMetier: "mona@bank.example",
      roles: ["PRODUCT_OWNER:mona@bank.example", "TECH_LEAD:ivan@bank.example"]
    })
    const core = await system.api(readA.token).get(`${apps}/APP-CORE`)
    expect(core.body.annualCost).toBe(1_000_000 + 250_000 + 500_000 + 2_000_000)
  })

  it("answers 404 NOT_FOUND for an unknown code", async () => {
    const reply = await system.api(readA.token).get(`${apps}/APP-NOPE`)
    expectProblem(reply, "NOT_FOUND", path(`${apps}/APP-NOPE`))
  })
})

describe("application filters", () => {
  const single: ReadonlyArray<ApplicationFilter> = [
    ...["PUBLIC", "INTERNAL", "CONFIDENTIAL", "RESTRICTED"].map((data_class) => ({ data_class })),
    ...["MISSION_CRITICAL", "IMPORTANT", "NOMINAL", "LOW"].map((criticality) => ({ criticality })),
    ...["DORA", "NIS2", "RGPD", "PCI_DSS", "HDS", "ISO_27001"].map((regulation) => ({ regulation })),
    ...["ACTIVE", "PLANNED", "DEPRECATED", "RETIRED"].map((status) => ({ status }))
  ]
  const combined: ReadonlyArray<ApplicationFilter> = [
    { data_class: "RESTRICTED", criticality: "MISSION_CRITICAL" },
    { data_class: "RESTRICTED", criticality: "MISSION_CRITICAL", status: "ACTIVE" },
    { regulation: "DORA", status: "ACTIVE" },
    { regulation: "NIS2", data_class: "CONFIDENTIAL" },
    { criticality: "NOMINAL", status: "RETIRED", data_class: "PUBLIC", regulation: "HDS" },
    { criticality: "LOW", regulation: "DORA" }
  ]

  it.each([...single, ...combined])("filters by %o", async (filter) => {
    const reply = await system.api(readA.token).get(`${apps}?${new URLSearchParams({ ...filter })}`)
    expect(reply.status).toBe(200)
    expect(reply.body.map(comparable)).toEqual(applyFilter(tenantAExpected, filter).map((app) => expectedRead(app, expect)))
  })

  it("gives the hand-checked answers for a few filters", async () => {
    const codes = async (query: string) => (await system.api(readA.token).get(`${apps}?${query}`)).body.map((a: any) => a.code)
    expect(await codes("regulation=NIS2")).toEqual(["APP-AUDIT", "APP-CORE", "APP-CRM"])
    expect(await codes("criticality=MISSION_CRITICAL")).toEqual(["APP-CORE", "APP-LEGACY", "APP-PAY"])
    expect(await codes("data_class=RESTRICTED&status=ACTIVE")).toEqual(["APP-CORE"])
    expect(await codes("regulation=HDS&status=ACTIVE")).toEqual([])
  })

  it.each([
    "data_class=SECRET",
    "data_class=public",
    "criticality=HIGH",
    "regulation=SOX",
    "regulation=DORA,NIS2",
    "status=ARCHIVED",
    "status=",
    "status=ACTIVE&criticality=CRITICAL"
  ])("refuses %s with 400 INVALID_REQUEST", async (query) => {
    const reply = await system.api(readA.token).get(`${apps}?${query}`)
    expectProblem(reply, "INVALID_REQUEST", path(apps))
  })
})

describe("change log", () => {
  const changes = (code: string, query = "") => system.api(readA.token).get(`${apps}/${code}/changes${query}`)
  const recorded = auditUpdates.flatMap((update) => (update.change === null ? [] : [update.change])).reverse()

  it("lists the updates made through `portfolio app put`, newest first", async () => {
    const reply = await changes("APP-AUDIT", `?limit=${recorded.length}`)
    expect(reply.status).toBe(200)
    expect(reply.body.map((entry: any) => ({ ...entry, ...(entry.field === "regulations" ? comparableChange(entry) : {}) }))).toEqual(
      recorded.map((change) => ({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        applicationCode: "APP-AUDIT",
        ...change,
        ...(change.field === "regulations" ? comparableChange(change) : {}),
        changedBy: expect.stringMatching(/\S/),
        changedAt: expect.stringMatching(isoTimestamp)
      }))
    )
  })

  it("keeps the whole list in reverse chronological order, audited fields only", async () => {
    const reply = await changes("APP-AUDIT")
    expect(reply.status).toBe(200)
    const times = reply.body.map((entry: any) => Date.parse(entry.changedAt))
    expect(times).toEqual([...times].sort((a, b) => b - a))
    expect(reply.body.slice(0, recorded.length).map((entry: any) => entry.field)).toEqual(recorded.map((change) => change.field))
    // Creation may or may not be logged, but never with more entries than audited fields, and the
    // name (not audited) never appears.
    expect(reply.body.length).toBeLessThanOrEqual(recorded.length + 11)
    expect(reply.body.filter((entry: any) => entry.field === "name")).toEqual([])
  })

  it("answers 50 entries by default, and caps limit at 200", async () => {
    const expectedHours = (count: number) => Array.from({ length: count }, (_, i) => String(bulkUpdates - i))
    const byDefault = await changes(bulkCode)
    expect(byDefault.body.map((entry: any) => entry.newValue)).toEqual(expectedHours(50))
    const capped = await changes(bulkCode, "?limit=500")
    expect(capped.body.map((entry: any) => entry.newValue)).toEqual(expectedHours(200))
    const atCap = await changes(bulkCode, "?limit=200")
    expect(atCap.body.length).toBe(200)
    const one = await changes(bulkCode, "?limit=1")
    expect(one.body).toEqual([
      {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        applicationCode: bulkCode,
        field: "rtoHours",
        oldValue: String(bulkUpdates - 1),
        newValue: String(bulkUpdates),
        changedBy: expect.stringMatching(/\S/),
        changedAt: expect.stringMatching(isoTimestamp)
      }
    ])
  })

  it.each(["0", "-1", "abc", "1.5", ""])("refuses limit=%s with 400 INVALID_REQUEST", async (limit) => {
    const reply = await changes(bulkCode, `?limit=${limit}`)
    expectProblem(reply, "INVALID_REQUEST", path(`${apps}/${bulkCode}/changes`))
  })

  it("answers 404 for the changes of an unknown application", async () => {
    const reply = await changes("APP-NOPE")
    expectProblem(reply, "NOT_FOUND", path(`${apps}/APP-NOPE/changes`))
  })
})

describe("unknown regulation token", () => {
  it("makes `portfolio app put` exit non-zero with the 400 INVALID_REGULATION problem on stderr, and stores nothing", async () => {
    const result = await system.cli(["app", "put", "--tenant", tenantA.slug, "--json"], JSON.stringify({ code: "APP-SOX", name: "Sox", regulations: "DORA,SOX" }))
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain("INVALID_REGULATION")
    expect(result.stdout.trim()).toBe("")
    const reply = await system.api(readA.token).get(`${apps}/APP-SOX`)
    expect(reply.status).toBe(404)
  }, 120_000)

  it("leaves an existing application unchanged when an update carries an unknown token", async () => {
    const before = await system.api(readA.token).get(`${apps}/APP-CRM`)
    const result = await system.cli(["app", "put", "--tenant", tenantA.slug], JSON.stringify({ code: "APP-CRM", name: "Customer Relationship", regulations: "NIS2,GDPR" }))
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain("INVALID_REGULATION")
    const after = await system.api(readA.token).get(`${apps}/APP-CRM`)
    expect(after.body).toEqual(before.body)
  }, 120_000)

  it("is a 400 INVALID_REGULATION problem on the admin PUT", async () => {
    const adminPath = `/admin/tenants/${tenantA.id}/applications/APP-SOX`
    const reply = await system.admin("referential", "PUT", adminPath, { body: { name: "Sox", regulations: "SOX" } })
    expectProblem(reply, "INVALID_REGULATION", adminPath)
  })
})

const comparableChange = (change: { oldValue: string | null; newValue: string | null }) => ({
  oldValue: change.oldValue?.split(",").sort().join(","),
  newValue: change.newValue?.split(",").sort().join(",")
})
