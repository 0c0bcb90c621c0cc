import { randomUUID } from "node:crypto"
import { beforeAll, describe, expect, it } from "vitest"
import { expectProblem } from "../support/problem.js"
import {
  applyFilter,
  auditCreate,
  auditUpdates,
  bulkCode,
  bulkCreate,
  bulkUpdates,
  comparable,
  expectedRead,
  isoTimestamp,
  tenantAExpected,
  tenantAInputs,
  tenantBExpected,
  tenantBInputs,
  type ApplicationFilter
} from "../support/referential-data.js"
import type { CreatedPat, CreatedTenant } from "../support/system.js"
import { useSystem } from "../support/useSystem.js"

// Many requests per PAT here; the 180/min default is the subject of rate-limit.test.ts.
const system = useSystem({ RATE_LIMIT_PER_MINUTE: "100000" })

let tenantA: CreatedTenant
let tenantB: CreatedTenant
let readA: CreatedPat
let writeA: CreatedPat
let readB: CreatedPat
const fn: Record<string, any> = {}

const apps = "/referentiel/applications"
const path = (p: string) => `/api/v1${p}`

beforeAll(async () => {
  ;[tenantA, tenantB] = await Promise.all([system.createTenant("bb-alpha"), system.createTenant("bb-beta")])
  ;[readA, writeA, readB] = await Promise.all([
    system.createPat(tenantA, "read"),
    system.createPat(tenantA, "write"),
    system.createPat(tenantB, "read")
  ])

  const audit = async () => {
    // One after the other, so that their order in the change log is known.
    await system.putApplication(tenantA, auditCreate)
    for (const update of auditUpdates) await system.putApplication(tenantA, update.input)
  }
  const bulk = async () => {
    const bulkPath = `/admin/tenants/${tenantA.id}/applications/${bulkCode}`
    await system.adminOk("referential", "PUT", bulkPath, bulkCreate)
    for (let hours = 1; hours <= bulkUpdates; hours++) await system.adminOk("referential", "PUT", bulkPath, { ...bulkCreate, rtoHours: hours })
  }
  // A parent before its child; everything independent in parallel to keep the set-up short.
  await Promise.all([
    system.putApplication(tenantA, tenantAInputs[0]!).then(() => Promise.all(tenantAInputs.slice(1).map((input) => system.putApplication(tenantA, input)))),
    ...tenantBInputs.map((input) => system.putApplication(tenantB, input)),
    audit(),
    bulk()
  ])

  // Functions: no CLI command exists for them, so the operator uses the referential admin API.
  const functions = `/admin/tenants/${tenantA.id}/functions`
  fn["FIN"] = await system.adminOk("referential", "POST", functions, { code: "FIN", name: "Finance", description: "Money matters" })
  fn["HR"] = await system.adminOk("referential", "POST", functions, { code: "HR", name: "Human Resources" })
  fn["FIN-ACC"] = await system.adminOk("referential", "POST", functions, { code: "FIN-ACC", name: "Accounting", parentId: fn["FIN"].id })
  fn["FIN-PAY"] = await system.adminOk("referential", "POST", functions, { code: "FIN-PAY", name: "Payments processing", parentId: fn["FIN"].id })
  // Created under the wrong parent, then moved: the tree must show the move.
  fn["FIN-PAY-SEPA"] = await system.adminOk("referential", "POST", functions, { code: "FIN-PAY-SEPA", name: "SEPA transfers", parentId: fn["FIN-ACC"].id })
  await system.adminOk("referential", "POST", `${functions}/${fn["FIN-PAY-SEPA"].id}/move`, { parentId: fn["FIN-PAY"].id })
  for (const [code, app] of [["FIN-ACC", "APP-CORE"], ["FIN-ACC", "APP-CRM"], ["FIN-PAY-SEPA", "APP-PAY"], ["HR", "APP-CRM"]] as const) {
    await system.adminOk("referential", "PUT", `${functions}/${fn[code].id}/applications/${app}`)
  }
  await system.adminOk("referential", "POST", `/admin/tenants/${tenantB.id}/functions`, { code: "B-OPS", name: "Beta operations" })
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

/** Functions as the flat list, search and by-application answer them. */
const flatFunction = (code: string, parent: string | null, level: number, pathCodes: ReadonlyArray<string>, applicationCodes: ReadonlyArray<string>) => ({
  id: fn[code].id,
  code,
  name: fn[code].name,
  description: fn[code].description ?? null,
  parentId: parent === null ? null : fn[parent].id,
  level,
  path: pathCodes,
  applicationCodes,
  createdAt: expect.stringMatching(isoTimestamp),
  updatedAt: expect.stringMatching(isoTimestamp)
})
const flatAll = () => [
  flatFunction("FIN", null, 1, ["FIN"], []),
  flatFunction("FIN-ACC", "FIN", 2, ["FIN", "FIN-ACC"], ["APP-CORE", "APP-CRM"]),
  flatFunction("FIN-PAY", "FIN", 2, ["FIN", "FIN-PAY"], []),
  flatFunction("FIN-PAY-SEPA", "FIN-PAY", 3, ["FIN", "FIN-PAY", "FIN-PAY-SEPA"], ["APP-PAY"]),
  flatFunction("HR", null, 1, ["HR"], ["APP-CRM"])
]
const byCode = (list: ReadonlyArray<any>) => [...list].sort((a, b) => (a.code < b.code ? -1 : 1))

describe("business functions", () => {
  const node = (code: string, children: ReadonlyArray<unknown>) => {
    const { path: _path, ...rest } = flatAll().find((f) => f.code === code)!
    return { ...rest, children }
  }
  const linked = (code: string) => {
    const app = tenantAExpected.find((a) => a.code === code)!
    const parent = tenantAExpected.find((a) => a.code === app.parentCode)
    return { code, name: app.name, parentCode: app.parentCode, parentName: parent?.name ?? null, criticality: app.criticality }
  }
  const posi = (code: string, children: ReadonlyArray<unknown>) => ({
    ...node(code, children),
    applications: node(code, []).applicationCodes.map(linked)
  })

  it("answers the tree, siblings sorted by code, after a move", async () => {
    const reply = await system.api(readA.token).get("/referentiel/functions")
    expect(reply.status).toBe(200)
    expect(reply.body).toEqual([
      node("FIN", [node("FIN-ACC", []), node("FIN-PAY", [node("FIN-PAY-SEPA", [])])]),
      node("HR", [])
    ])
  })

  it("answers the flat list in depth-first order with level and path", async () => {
    const reply = await system.api(readA.token).get("/referentiel/functions/flat")
    expect(reply.status).toBe(200)
    expect(reply.body).toEqual(flatAll())
  })

  it("answers the enriched (posi) tree with name, parent and criticality of linked applications", async () => {
    const reply = await system.api(readA.token).get("/referentiel/functions/posi")
    expect(reply.status).toBe(200)
    expect(reply.body).toEqual([
      posi("FIN", [posi("FIN-ACC", []), posi("FIN-PAY", [posi("FIN-PAY-SEPA", [])])]),
      posi("HR", [])
    ])
    expect(reply.body[0].children[1].children[0].applications).toEqual([
      { code: "APP-PAY", name: "Payments Hub", parentCode: "APP-CORE", parentName: "Core Banking", criticality: "MISSION_CRITICAL" }
    ])
  })

  it("reads one function", async () => {
    const reply = await system.api(readA.token).get(`/referentiel/functions/${fn["FIN-PAY-SEPA"].id}`)
    expect(reply.status).toBe(200)
    expect(reply.body).toEqual(flatAll()[3])
  })

  it("answers 404 for an unknown function id", async () => {
    const id = randomUUID()
    expectProblem(await system.api(readA.token).get(`/referentiel/functions/${id}`), "NOT_FOUND", path(`/referentiel/functions/${id}`))
  })

  it.each([
    ["pay", ["FIN-PAY", "FIN-PAY-SEPA"]],
    ["PAY", ["FIN-PAY", "FIN-PAY-SEPA"]],
    ["money", ["FIN"]],
    ["human", ["HR"]],
    ["zzz", []]
  ])("searches q=%s", async (q, codes) => {
    const reply = await system.api(readA.token).get(`/referentiel/functions/search?q=${q}`)
    expect(reply.status).toBe(200)
    expect(byCode(reply.body)).toEqual(flatAll().filter((f) => codes.includes(f.code)))
  })

  it.each(["", "q=", "q=%20%20"])("refuses a search without a usable q (%s) with 400", async (query) => {
    const reply = await system.api(readA.token).get(`/referentiel/functions/search?${query}`)
    expectProblem(reply, "INVALID_REQUEST", path("/referentiel/functions/search"))
  })

  it("lists the functions of one application", async () => {
    const crm = await system.api(readA.token).get("/referentiel/functions/by-application/APP-CRM")
    expect(crm.status).toBe(200)
    expect(byCode(crm.body)).toEqual(flatAll().filter((f) => ["FIN-ACC", "HR"].includes(f.code)))
    const web = await system.api(readA.token).get("/referentiel/functions/by-application/APP-WEB")
    expect({ status: web.status, body: web.body }).toEqual({ status: 200, body: [] })
    const nope = await system.api(readA.token).get("/referentiel/functions/by-application/APP-NOPE")
    expectProblem(nope, "NOT_FOUND", path("/referentiel/functions/by-application/APP-NOPE"))
  })

  it("answers the referential statistics", async () => {
    const count = (key: "criticality" | "dataClassification" | "status") =>
      tenantAExpected.reduce<Record<string, number>>((acc, app) => ({ ...acc, [app[key]]: (acc[app[key]] ?? 0) + 1 }), {})
    const withoutZeros = (record: Record<string, number>) => Object.fromEntries(Object.entries(record).filter(([, n]) => n !== 0))
    const reply = await system.api(readA.token).get("/referentiel/functions/stats")
    expect(reply.status).toBe(200)
    expect({
      ...reply.body,
      applicationsByCriticality: withoutZeros(reply.body.applicationsByCriticality),
      applicationsByDataClassification: withoutZeros(reply.body.applicationsByDataClassification),
      applicationsByStatus: withoutZeros(reply.body.applicationsByStatus)
    }).toEqual({
      functionCount: 5,
      rootFunctionCount: 2,
      maxDepth: 3,
      functionsWithoutApplication: 2,
      applicationCount: tenantAExpected.length,
      applicationsWithoutFunction: tenantAExpected.length - 3,
      linkCount: 4,
      averageApplicationsPerFunction: 0.8,
      applicationsByCriticality: count("criticality"),
      applicationsByDataClassification: count("dataClassification"),
      applicationsByStatus: count("status")
    })
    expect(count("criticality")).toEqual({ IMPORTANT: 2, NOMINAL: 3, MISSION_CRITICAL: 3, LOW: 2 })
  })
})

describe("tenant isolation", () => {
  it("shows tenant B only its own applications, even under a code tenant A also uses", async () => {
    const list = await system.api(readB.token).get(apps)
    expect(list.body.map(comparable)).toEqual(tenantBExpected.map((app) => expectedRead(app, expect)))
    const shared = await system.api(readB.token).get(`${apps}/SHARED-1`)
    expect(shared.body.name).toBe("Beta shared")
    const sharedA = await system.api(readA.token).get(`${apps}/SHARED-1`)
    expect(sharedA.body.name).toBe("Alpha shared")
  })

  it("answers 404 to tenant B for tenant A's application, changes and functions", async () => {
    const b = system.api(readB.token)
    expectProblem(await b.get(`${apps}/APP-CORE`), "NOT_FOUND", path(`${apps}/APP-CORE`))
    expectProblem(await b.get(`${apps}/APP-AUDIT/changes`), "NOT_FOUND", path(`${apps}/APP-AUDIT/changes`))
    expectProblem(await b.get(`/referentiel/functions/${fn["FIN"].id}`), "NOT_FOUND", path(`/referentiel/functions/${fn["FIN"].id}`))
    expectProblem(await b.get("/referentiel/functions/by-application/APP-CRM"), "NOT_FOUND", path("/referentiel/functions/by-application/APP-CRM"))
  })

  it("gives tenant B its own tree, search, filters and statistics", async () => {
    const b = system.api(readB.token)
    const tree = await b.get("/referentiel/functions")
    expect(tree.body.map((f: any) => f.code)).toEqual(["B-OPS"])
    expect((await b.get("/referentiel/functions/flat")).body.map((f: any) => f.code)).toEqual(["B-OPS"])
    expect((await b.get("/referentiel/functions/search?q=fin")).body).toEqual([])
    expect((await b.get(`${apps}?regulation=NIS2`)).body).toEqual([])
    const stats = await b.get("/referentiel/functions/stats")
    expect({ functionCount: stats.body.functionCount, applicationCount: stats.body.applicationCount, linkCount: stats.body.linkCount }).toEqual({
      functionCount: 1,
      applicationCount: 2,
      linkCount: 0
    })
    // The write PAT of tenant A reads tenant A (write includes read).
    expect((await system.api(writeA.token).get(apps)).body.length).toBe(tenantAExpected.length)
  })
})

const comparableChange = (change: { oldValue: string | null; newValue: string | null }) => ({
  oldValue: change.oldValue?.split(",").sort().join(","),
  newValue: change.newValue?.split(",").sort().join(",")
})
