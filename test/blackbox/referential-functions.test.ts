import { randomUUID } from "node:crypto"
import { beforeAll, describe, expect, it } from "vitest"
import { expectProblem } from "../support/problem.js"
import { comparable, expectedRead, isoTimestamp, tenantAExpected, tenantBExpected } from "../support/referential-data.js"
import { seedReferential } from "../support/referential-seed.js"
import type { CreatedPat } from "../support/system.js"
import { useSharedSystem } from "../support/useSystem.js"

// Many requests per PAT here; the 180/min default is the subject of rate-limit.test.ts.
const system = useSharedSystem()

let readA: CreatedPat
let writeA: CreatedPat
let readB: CreatedPat
const fn: Record<string, any> = {}

const apps = "/referentiel/applications"
const path = (p: string) => `/api/v1${p}`

beforeAll(async () => {
  const seeded = await seedReferential(system, "bb-functions")
  ;({ readA, writeA, readB } = seeded)
  Object.assign(fn, seeded.functions)
  // Some twenty CLI processes on a two-core machine: allow for a busy one.
}, 240_000)

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
