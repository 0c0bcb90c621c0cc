import { HttpClient, HttpClientRequest, HttpRouter } from "effect/http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { describe, expect, layer } from "@effect/vitest"
import { CallerIdentity } from "@portfolio/domain"
import { ErrorsUrl, ProblemMiddlewareLive } from "@portfolio/platform/http"
import { AssertionHeader, InternalSecret, signedRequest } from "@portfolio/platform/security"
import { Effect, Layer, Stream } from "effect"
import { ApplicationRepository } from "../../src/ports/ApplicationRepository.js"
import { FunctionRepository } from "../../src/ports/FunctionRepository.js"
import { EncodedReadCache } from "../../src/adapters/http/EncodedReadCache.js"
import { ReadFreshness } from "../../src/usecases/ReadFreshness.js"
import { AdminHttpLive, PublicHttpLive } from "../../src/adapters/http/Servers.js"
import { listApplicationChanges } from "../../src/usecases/ApplicationQueries.js"
import { createDas } from "../../src/usecases/DasCommands.js"
import { createFunction, linkApplication, unlinkApplication, updateFunction } from "../../src/usecases/FunctionCommands.js"
import { referentialRevisions } from "../../src/usecases/FunctionQueries.js"
import { putApplication } from "../../src/usecases/PutApplication.js"
import { seedDemo } from "../../src/usecases/SeedDemo.js"
import { appInput, fnInput, tenantA, tenantB } from "../support/Fixtures.js"
import { MemoryLayer } from "../support/Memory.js"

const secret = "referential-http-test-secret-of-32-chars-at-least"
const errorsUrl = "https://errors.test/api"

/** How many times each read a cached form is built from was made. */
const storageReads = { applicationList: 0, application: 0, applicationCounts: 0, functions: 0, linkedApplications: 0, functionCounts: 0, search: 0 }
const counted = <A>(read: keyof typeof storageReads, effect: Effect.Effect<A>) =>
  Effect.suspend(() => {
    storageReads[read] += 1
    return effect
  })
/** The in-memory ports, counting the reads of the cached forms: an answer from the cache makes none. */
const CountingStorage = Layer.merge(
  Layer.effect(
    ApplicationRepository,
    Effect.map(ApplicationRepository, (inner) => ({
      ...inner,
      listAllChanged: (...args: Parameters<typeof inner.listAllChanged>) => Stream.unwrap(counted("applicationList", Effect.succeed(inner.listAllChanged(...args)))),
      find: (...args: Parameters<typeof inner.find>) => counted("application", inner.find(...args)),
      counts: (tenantId: string) => counted("applicationCounts", inner.counts(tenantId)),
      listLinkedChanged: (...args: Parameters<typeof inner.listLinkedChanged>) => Stream.unwrap(counted("linkedApplications", Effect.succeed(inner.listLinkedChanged(...args))))
    }))
  ),
  Layer.effect(
    FunctionRepository,
    Effect.map(FunctionRepository, (inner) => ({
      ...inner,
      walk: (tenantId: string) => Stream.unwrap(counted("functions", Effect.succeed(inner.walk(tenantId)))),
      counts: (tenantId: string) => counted("functionCounts", inner.counts(tenantId)),
      search: (...args: Parameters<typeof inner.search>) => counted("search", inner.search(...args))
    }))
  )
).pipe(Layer.provideMerge(MemoryLayer))

/** One port as main.ts serves it (problem+json middleware, real handlers), on an ephemeral port. */
const served = <E, R>(apiLayer: Layer.Layer<never, E, R>) =>
  HttpRouter.serve(apiLayer.pipe(Layer.provide(ProblemMiddlewareLive)), { disableLogger: true, disableListenLog: true }).pipe(
    Layer.provideMerge(NodeHttpServer.layerTest),
    Layer.provide(InternalSecret.fixed(secret)),
    Layer.provide(Layer.succeed(ErrorsUrl, errorsUrl)),
    Layer.provide(EncodedReadCache.fixed(1024 * 1024)),
    Layer.provideMerge(ReadFreshness.layer),
    Layer.provideMerge(CountingStorage)
  )

const reader = (tenantId: string) => new CallerIdentity({ tenantId, subject: "user-1", role: "viewer", scope: "read" })
const operator = new CallerIdentity({ tenantId: "00000000-0000-0000-0000-000000000000", subject: "operator-7", role: "operator", scope: "admin" })

/** The assertion the last `send` carried, to be replayed. */
let lastAssertion: string | undefined

const send = (
  method: "GET" | "PUT" | "POST" | "DELETE",
  path: string,
  options: {
    readonly as?: CallerIdentity
    readonly signedTarget?: string
    readonly signedBody?: unknown
    readonly secret?: string
    readonly body?: unknown
    /** An assertion to send as it is (a captured one), instead of signing one. */
    readonly assertion?: string
    /** Answers the Link header too, when there is one. */
    readonly link?: boolean
  } = {}
) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    let request = HttpClientRequest.make(method)(path)
    if (options.body !== undefined) request = HttpClientRequest.bodyJsonUnsafe(request, options.body)
    if (options.as !== undefined) {
      let signed = options.signedTarget === undefined ? request : HttpClientRequest.setUrl(request, options.signedTarget)
      if (options.signedBody !== undefined) signed = HttpClientRequest.bodyJsonUnsafe(signed, options.signedBody)
      request = HttpClientRequest.setHeader(request, AssertionHeader, signedRequest(options.secret ?? secret, options.as, { audience: "referential" })(signed).headers[AssertionHeader]!)
    }
    if (options.assertion !== undefined) request = HttpClientRequest.setHeader(request, AssertionHeader, options.assertion)
    const response = yield* client.execute(request)
    const text = yield* response.text
    lastAssertion = request.headers[AssertionHeader]
    return { status: response.status, contentType: response.headers["content-type"], ...(options.link === true && response.headers["link"] !== undefined ? { link: response.headers["link"] } : {}), body: text.length === 0 ? undefined : JSON.parse(text) }
  })

const unauthenticated = (detail: string, instance: string) => problem(401, "UNAUTHENTICATED", "unauthenticated", "Unauthenticated", detail, instance)

const problem = (status: number, errorCode: string, slug: string, title: string, detail: string, instance: string) => ({
  status,
  contentType: "application/problem+json",
  body: { type: `${errorsUrl}/${slug}`, title, status, detail, instance, errorCode }
})

const iso = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
const crmBody = {
  code: "APP-CRM",
  name: "CRM",
  description: null,
  parentCode: null,
  status: "ACTIVE",
  dataClassification: "CONFIDENTIAL",
  criticality: "IMPORTANT",
  rtoHours: 4,
  rpoHours: null,
  regulations: "NIS2,RGPD",
  roleAssignments: "BUSINESS_OWNER:bella",
  licenseCost: 300,
  supportCost: null,
  infraCost: null,
  staffCost: null,
  annualCost: 300,
  applicationVip: false,
  contactIT: null,
  contactMetier: null,
  createdAt: iso,
  updatedAt: iso
}

describe("referential public port", () => {
  layer(served(PublicHttpLive), { timeout: 30_000, excludeTestServices: true })((it) => {
    it.effect("answers 401 problem+json to a request without a valid assertion", () =>
      Effect.gen(function*() {
        const path = "/api/v1/referentiel/applications"
        expect(yield* send("GET", path)).toEqual(
          problem(401, "UNAUTHENTICATED", "unauthenticated", "Unauthenticated", "This service answers only requests forwarded by the gateway.", path)
        )
        expect(yield* send("GET", path, { as: reader(tenantA), signedTarget: "/api/v1/referentiel/functions" })).toEqual(
          unauthenticated("The internal assertion was signed for another method, path or query.", path)
        )
        expect(yield* send("GET", path, { as: reader(tenantA), secret: "another-secret-of-at-least-32-characters!!" })).toEqual(
          problem(401, "UNAUTHENTICATED", "unauthenticated", "Unauthenticated", "The internal assertion is not signed by the gateway.", path)
        )
        expect(yield* send("GET", path, { as: operator })).toEqual(
          problem(403, "INSUFFICIENT_SCOPE", "invalid-scope", "Insufficient scope", "Operator assertions are for the admin API.", path)
        )
      }))

    it.effect("executes an assertion once, for its query and its body only", () =>
      Effect.gen(function*() {
        const path = "/api/v1/referentiel/applications?status=ACTIVE"
        expect((yield* send("GET", path, { as: reader(tenantA) })).status).toBe(200)
        expect(yield* send("GET", path, { assertion: lastAssertion! })).toEqual(
          unauthenticated("The internal assertion has already been used.", "/api/v1/referentiel/applications")
        )
        expect(yield* send("GET", `${path}&criticality=LOW`, { as: reader(tenantA), signedTarget: path })).toMatchObject({
          status: 401,
          body: { detail: "The internal assertion was signed for another method, path or query." }
        })
        expect(yield* send("GET", path, { as: reader(tenantA), signedBody: {} })).toMatchObject({
          status: 401,
          body: { detail: "The internal assertion was signed for another request body." }
        })
      }))

    it.effect("answers the caller's tenant only, with the expected bodies", () =>
      Effect.gen(function*() {
        yield* putApplication(
          tenantA,
          "APP-CRM",
          appInput({ name: "CRM", dataClassification: "CONFIDENTIAL", criticality: "IMPORTANT", rtoHours: 4, regulations: "RGPD,NIS2", roleAssignments: "BUSINESS_OWNER:bella", licenseCost: 300 }),
          "ops"
        )
        yield* putApplication(tenantB, "APP-B", appInput({ name: "B" }), "ops")
        expect(yield* send("GET", "/api/v1/referentiel/applications", { as: reader(tenantA) })).toEqual({
          status: 200,
          contentType: "application/json",
          body: [crmBody]
        })
        expect(yield* send("GET", "/api/v1/referentiel/applications/APP-CRM", { as: reader(tenantA) })).toEqual({
          status: 200,
          contentType: "application/json",
          body: crmBody
        })
        expect(yield* send("GET", "/api/v1/referentiel/applications?regulation=NIS2&criticality=IMPORTANT", { as: reader(tenantA) }))
          .toMatchObject({ status: 200, body: [{ code: "APP-CRM" }] })
        expect(yield* send("GET", "/api/v1/referentiel/applications/APP-CRM", { as: reader(tenantB) })).toEqual(
          problem(404, "NOT_FOUND", "not-found", "Not found", "No application with code 'APP-CRM'.", "/api/v1/referentiel/applications/APP-CRM")
        )
        const changes = yield* send("GET", "/api/v1/referentiel/applications/APP-CRM/changes?limit=1", { as: reader(tenantA) })
        expect(changes).toEqual({
          status: 200,
          contentType: "application/json",
          body: [{ id: expect.any(String), applicationCode: "APP-CRM", field: "status", oldValue: null, newValue: "ACTIVE", changedBy: "ops", changedAt: iso }]
        })
      }))

    it.effect("refuses bad query parameters with 400 INVALID_REQUEST", () =>
      Effect.gen(function*() {
        for (const query of ["data_class=SECRET", "regulation=DORA,NIS2", "status="]) {
          const reply = yield* send("GET", `/api/v1/referentiel/applications?${query}`, { as: reader(tenantA) })
          expect({ status: reply.status, errorCode: reply.body.errorCode, contentType: reply.contentType })
            .toEqual({ status: 400, errorCode: "INVALID_REQUEST", contentType: "application/problem+json" })
        }
        const limit = yield* send("GET", "/api/v1/referentiel/applications/APP-CRM/changes?limit=0", { as: reader(tenantA) })
        expect({ status: limit.status, errorCode: limit.body.errorCode }).toEqual({ status: 400, errorCode: "INVALID_REQUEST" })
      }))

    it.effect("serves the tree as JSON and shows a write at once", () =>
      Effect.gen(function*() {
        const fin = yield* createFunction(tenantA, fnInput({ code: "FIN", name: "Finance" }))
        const tree = () => send("GET", "/api/v1/referentiel/functions", { as: reader(tenantA) })
        const node = (code: string, name: string, id: string, parentId: string | null, level: number, children: ReadonlyArray<unknown>) => ({
          id,
          code,
          name,
          description: null,
          parentId,
          level,
          applicationCodes: [],
          createdAt: iso,
          updatedAt: iso,
          children
        })
        expect(yield* tree()).toEqual({ status: 200, contentType: "application/json", body: [node("FIN", "Finance", fin.id, null, 1, [])] })
        expect((yield* tree()).body).toEqual([node("FIN", "Finance", fin.id, null, 1, [])])
        const acc = yield* createFunction(tenantA, fnInput({ code: "FIN-ACC", name: "Accounting", parentId: fin.id }))
        expect((yield* tree()).body).toEqual([node("FIN", "Finance", fin.id, null, 1, [node("FIN-ACC", "Accounting", acc.id, fin.id, 2, [])])])
        expect((yield* send("GET", "/api/v1/referentiel/functions", { as: reader(tenantB) })).body).toEqual([])
        const flat = yield* send("GET", "/api/v1/referentiel/functions/flat", { as: reader(tenantA) })
        expect(flat.body.map((fn: { path: Array<string> }) => fn.path)).toEqual([["FIN"], ["FIN", "FIN-ACC"]])
        const search = yield* send("GET", "/api/v1/referentiel/functions/search?q=acc", { as: reader(tenantA) })
        expect(search.body.map((fn: { code: string }) => fn.code)).toEqual(["FIN-ACC"])
        const stats = yield* send("GET", "/api/v1/referentiel/functions/stats", { as: reader(tenantA) })
        expect(stats.body).toMatchObject({ functionCount: 2, rootFunctionCount: 1, maxDepth: 2, applicationCount: 1 })
      }))
  })
})

describe("referential public port, cached forms", () => {
  layer(served(PublicHttpLive), { timeout: 30_000, excludeTestServices: true })((it) => {
    const forms = {
      applicationList: "/api/v1/referentiel/applications",
      application: "/api/v1/referentiel/applications/APP-S",
      tree: "/api/v1/referentiel/functions",
      flat: "/api/v1/referentiel/functions/flat",
      posi: "/api/v1/referentiel/functions/posi",
      stats: "/api/v1/referentiel/functions/stats",
      search: "/api/v1/referentiel/functions/search?q=scoped",
      // A first page is cut from the whole search once that is kept: nothing more read.
      searchPage: "/api/v1/referentiel/functions/search?q=scoped&limit=1"
    }
    type Form = keyof typeof forms
    /** Reads each form once: the bodies, and the storage reads it took to answer them. */
    const readAll = (tenantId: string, only: ReadonlyArray<Form> = Object.keys(forms) as Array<Form>) =>
      Effect.gen(function*() {
        for (const read of Object.keys(storageReads) as Array<keyof typeof storageReads>) storageReads[read] = 0
        const bodies: Partial<Record<Form, any>> = {}
        for (const form of only) {
          const reply = yield* send("GET", forms[form], { as: reader(tenantId) })
          expect(reply.status).toBe(200)
          bodies[form] = reply.body
        }
        return { bodies: bodies as Record<Form, any>, reads: { ...storageReads } }
      })
    // What the builds read: tree, flat and posi's template read every function each; posi reads
    // the applications again after a write of either scope, its template only after one of functions.
    const none = { applicationList: 0, application: 0, applicationCounts: 0, functions: 0, linkedApplications: 0, functionCounts: 0, search: 0 }
    // The statistics count each half again only after a write of its own scope.
    const applicationForms = { applicationList: 1, application: 1, applicationCounts: 1, linkedApplications: 1 }
    const functionForms = { functions: 3, functionCounts: 1, search: 1, linkedApplications: 1 }

    it.effect("rebuilds a form only after a write of what it is read from, and never after a write that changes nothing", () =>
      Effect.gen(function*() {
        const tenant = "33333333-3333-4333-8333-333333333333"
        yield* putApplication(tenant, "APP-S", appInput({ name: "Scoped", criticality: "IMPORTANT" }), "ops")
        const fn = yield* createFunction(tenant, fnInput({ code: "F-S", name: "Scoped function" }))
        yield* linkApplication(tenant, fn.id, "APP-S")
        expect((yield* readAll(tenant)).reads).toEqual({ ...none, ...applicationForms, ...functionForms })
        expect((yield* readAll(tenant)).reads).toEqual(none)

        // An application's write: its list, its view, posi (names and criticalities) and the statistics.
        yield* putApplication(tenant, "APP-S", appInput({ name: "Renamed", criticality: "LOW" }), "ops")
        const renamed = yield* readAll(tenant)
        expect(renamed.reads).toEqual({ ...none, ...applicationForms })
        expect(renamed.bodies.application.name).toBe("Renamed")
        expect(renamed.bodies.applicationList.map((application: { name: string }) => application.name)).toEqual(["Renamed"])
        expect(renamed.bodies.posi[0].applications).toMatchObject([{ code: "APP-S", name: "Renamed", criticality: "LOW" }])
        expect(renamed.bodies.stats.applicationsByCriticality).toMatchObject({ IMPORTANT: 0, LOW: 1 })
        // The tree and the flat list hold the application's code only, which no write changes.
        expect([renamed.bodies.tree[0].applicationCodes, renamed.bodies.flat[0].applicationCodes]).toEqual([["APP-S"], ["APP-S"]])
        expect(renamed.bodies.search.map((fn: { code: string }) => fn.code)).toEqual(["F-S"])
        expect(renamed.bodies.searchPage).toEqual(renamed.bodies.search)

        // The same content again, a link that exists, an unlink refused: nothing written, nothing rebuilt.
        const revisions = yield* referentialRevisions(tenant)
        yield* putApplication(tenant, "APP-S", appInput({ name: "Renamed", criticality: "LOW" }), "ops")
        yield* linkApplication(tenant, fn.id, "APP-S")
        yield* Effect.flip(unlinkApplication(tenant, fn.id, "APP-NONE"))
        expect(yield* referentialRevisions(tenant)).toEqual(revisions)
        expect((yield* readAll(tenant)).reads).toEqual(none)

        // A function's write: the function forms, posi and the statistics, not the applications.
        yield* updateFunction(tenant, fn.id, fnInput({ code: "F-S", name: "Renamed function" }))
        const updated = yield* readAll(tenant)
        expect(updated.reads).toEqual({ ...none, ...functionForms })
        expect([updated.bodies.tree[0].name, updated.bodies.flat[0].name, updated.bodies.posi[0].name]).toEqual(Array(3).fill("Renamed function"))
        // The search's text is no longer in the function's name.
        expect([updated.bodies.search, updated.bodies.searchPage]).toEqual([[], []])
        yield* unlinkApplication(tenant, fn.id, "APP-S")
        const unlinked = yield* readAll(tenant)
        expect(unlinked.reads).toEqual({ ...none, ...functionForms })
        expect([unlinked.bodies.tree[0].applicationCodes, unlinked.bodies.posi[0].applications]).toEqual([[], []])
        expect(unlinked.bodies.stats).toMatchObject({ linkCount: 0, applicationsWithoutFunction: 1 })
        // An application's functions are read as asked (a 404 for an unknown application): the unlink shows at once.
        expect((yield* send("GET", "/api/v1/referentiel/functions/by-application/APP-S", { as: reader(tenant) })).body).toEqual([])

        // A DAS shows in no public read.
        yield* createDas(tenant, { applicationCode: "APP-S", title: "Dossier" })
        expect((yield* readAll(tenant)).reads).toEqual(none)
      }))

    it.effect("reads a search's first page as asked, and keeps its whole result once it is walked with a cursor", () =>
      Effect.gen(function*() {
        const tenant = "55555555-5555-4555-8555-555555555555"
        for (const code of ["W-3", "W-1", "W-2"]) yield* createFunction(tenant, fnInput({ code, name: `Walked ${code}` }))
        const path = "/api/v1/referentiel/functions/search?q=walked"
        const page = (url: string) =>
          Effect.gen(function*() {
            const before = storageReads.search
            const reply = yield* send("GET", url, { as: reader(tenant), link: true })
            expect(reply.status).toBe(200)
            const link = (reply as { readonly link?: string }).link
            const next = link === undefined ? undefined : `/api/v1/referentiel/functions/${/^<([^>]*)>; rel="next"$/.exec(link)![1]}`
            return { codes: reply.body.map((fn: { code: string }) => fn.code), next, read: storageReads.search - before }
          })
        const first = yield* page(`${path}&limit=1`)
        expect(first).toMatchObject({ codes: ["W-1"], read: 1 })
        const second = yield* page(first.next!)
        expect(second).toMatchObject({ codes: ["W-2"], read: 1 })
        const third = yield* page(second.next!)
        expect(third).toEqual({ codes: ["W-3"], next: undefined, read: 0 })
        // The first page again, and the whole answer: both from the kept result.
        expect(yield* page(`${path}&limit=1`)).toMatchObject({ codes: ["W-1"], read: 0 })
        expect(yield* page(path)).toEqual({ codes: ["W-1", "W-2", "W-3"], next: undefined, read: 0 })
        // A write of functions: the first page is read as asked again.
        yield* createFunction(tenant, fnInput({ code: "W-0", name: "Walked first" }))
        expect(yield* page(`${path}&limit=2`)).toMatchObject({ codes: ["W-0", "W-1"], read: 1 })
      }))

    it.effect("rebuilds every form after the demo seed, which writes both", () =>
      Effect.gen(function*() {
        const tenant = "44444444-4444-4444-8444-444444444444"
        const everyList: ReadonlyArray<Form> = ["applicationList", "tree", "flat", "posi", "stats", "search", "searchPage"]
        expect((yield* readAll(tenant, everyList)).bodies.stats).toMatchObject({ applicationCount: 0, functionCount: 0 })
        const seeded = yield* seedDemo(tenant, { applications: 5, functions: 8, maxDepth: 2, seed: 7 }, "ops")
        const after = yield* readAll(tenant, everyList)
        expect(after.reads).toEqual({ ...none, applicationList: 1, applicationCounts: 1, ...functionForms })
        expect([after.bodies.applicationList.length, after.bodies.flat.length]).toEqual([seeded.applications, seeded.functions])
        expect(after.bodies.stats).toMatchObject({ applicationCount: seeded.applications, functionCount: seeded.functions, linkCount: seeded.links })
      }))
  })
})

describe("referential admin port", () => {
  layer(served(AdminHttpLive), { timeout: 30_000, excludeTestServices: true })((it) => {
    const appPath = `/admin/tenants/${tenantA}/applications/APP-1`

    it.effect("accepts only operator assertions", () =>
      Effect.gen(function*() {
        expect(yield* send("PUT", appPath, { body: { name: "One" } })).toEqual(
          problem(401, "UNAUTHENTICATED", "unauthenticated", "Unauthenticated", "This service answers only requests forwarded by the gateway.", appPath)
        )
        expect(yield* send("PUT", appPath, { as: reader(tenantA), body: { name: "One" } })).toEqual(
          problem(403, "INSUFFICIENT_SCOPE", "invalid-scope", "Insufficient scope", "The admin API requires an operator assertion with scope 'admin'.", appPath)
        )
      }))

    it.effect("refuses an operator assertion for another body or another application, and changes nothing", () =>
      Effect.gen(function*() {
        const otherApp = `/admin/tenants/${tenantA}/applications/APP-OTHER`
        expect(yield* send("PUT", appPath, { as: operator, body: { name: "Changed" }, signedBody: { name: "One" } })).toEqual(
          unauthenticated("The internal assertion was signed for another request body.", appPath)
        )
        expect(yield* send("PUT", otherApp, { as: operator, body: { name: "One" }, signedTarget: appPath })).toEqual(
          unauthenticated("The internal assertion was signed for another method, path or query.", otherApp)
        )
        expect((yield* listApplicationChanges(tenantA, "APP-OTHER", undefined).pipe(Effect.result))._tag).toBe("Failure")
      }))

    it.effect("puts applications, naming the operator in the change log, and answers each refusal as a problem", () =>
      Effect.gen(function*() {
        const created = yield* send("PUT", appPath, { as: operator, body: { name: "One", applicationVip: true, contactIT: "ivan" } })
        expect(created).toMatchObject({
          status: 200,
          body: { code: "APP-1", criticality: "MISSION_CRITICAL", applicationVip: true, roleAssignments: "TECH_LEAD:ivan", contactIT: "ivan" }
        })
        const authors = (yield* listApplicationChanges(tenantA, "APP-1", undefined)).map((entry) => entry.changedBy)
        expect(new Set(authors)).toEqual(new Set(["operator-7"]))
        expect(yield* send("PUT", appPath, { as: operator, body: { name: "One", regulations: "DORA,SOX" } })).toEqual(
          problem(400, "INVALID_REGULATION", "invalid-regulation", "Invalid regulation",
            "Unknown regulation token 'SOX'. Allowed tokens (case-sensitive): DORA, NIS2, RGPD, PCI_DSS, HDS, ISO_27001.", appPath)
        )
        expect(yield* send("PUT", appPath, { as: operator, body: { name: "One", parentCode: "APP-1" } })).toEqual(
          problem(409, "CONFLICT", "conflict", "Conflict", "Application 'APP-1' cannot be its own parent.", appPath)
        )
        expect(yield* send("PUT", appPath, { as: operator, body: { name: "One", parentCode: "APP-NONE" } })).toEqual(
          problem(404, "NOT_FOUND", "not-found", "Not found", "Parent application 'APP-NONE' does not exist.", appPath)
        )
        const invalid = yield* send("PUT", appPath, { as: operator, body: { name: "One", roleAssignments: "CEO:bob" } })
        expect({ status: invalid.status, errorCode: invalid.body.errorCode }).toEqual({ status: 400, errorCode: "INVALID_REQUEST" })
      }))

    it.effect("creates, moves, links and deletes functions", () =>
      Effect.gen(function*() {
        const functions = `/admin/tenants/${tenantA}/functions`
        const root = yield* send("POST", functions, { as: operator, body: { code: "R", name: "Root" } })
        expect(root).toMatchObject({ status: 201, body: { code: "R", level: 1, path: ["R"], parentId: null } })
        const child = yield* send("POST", functions, { as: operator, body: { code: "C", name: "Child" } })
        const moved = yield* send("POST", `${functions}/${child.body.id}/move`, { as: operator, body: { parentId: root.body.id } })
        expect(moved).toMatchObject({ status: 200, body: { level: 2, path: ["R", "C"], parentId: root.body.id } })
        const cycle = yield* send("POST", `${functions}/${root.body.id}/move`, { as: operator, body: { parentId: child.body.id } })
        expect({ status: cycle.status, errorCode: cycle.body.errorCode }).toEqual({ status: 409, errorCode: "CONFLICT" })
        expect(yield* send("PUT", `${functions}/${child.body.id}/applications/APP-1`, { as: operator })).toEqual({ status: 204, contentType: undefined, body: undefined })
        expect((yield* send("PUT", `${functions}/${child.body.id}/applications/APP-NONE`, { as: operator })).status).toBe(404)
        expect((yield* send("DELETE", `${functions}/${root.body.id}`, { as: operator })).status).toBe(409)
        expect((yield* send("DELETE", `${functions}/${child.body.id}`, { as: operator })).status).toBe(204)
        expect((yield* send("DELETE", `${functions}/${child.body.id}`, { as: operator })).status).toBe(404)
      }))

    it.effect("seeds an empty tenant once", () =>
      Effect.gen(function*() {
        const seedPath = `/admin/tenants/${tenantB}/demo-seed`
        const seeded = yield* send("POST", seedPath, { as: operator, body: { applications: 20, functions: 50, maxDepth: 3 } })
        expect(seeded).toMatchObject({ status: 200, body: { applications: 20, functions: 50 } })
        const again = yield* send("POST", seedPath, { as: operator, body: { applications: 20, functions: 50 } })
        expect(again).toEqual(
          problem(409, "CONFLICT", "conflict", "Conflict",
            `Tenant ${tenantB} already has 20 applications and 50 business functions; the demo seed only fills an empty referential.`, seedPath)
        )
      }))
  })
})
