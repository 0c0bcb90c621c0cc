import { HttpApi, HttpApiBuilder } from "effect/http-api"
import { HttpMiddleware, HttpRouter, HttpServer } from "effect/http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { describe, expect, layer } from "@effect/vitest"
import { ApplicationsGroup, Caller, CallerIdentity, CreatedPat, GatewayAdminApi, NotFound, Problems, RevokedPat } from "@portfolio/domain"
import { DateTime, Effect, Layer, Logger, References } from "effect"
import http from "node:http"
import { type AssertedRequest, InternalSecret, signAssertion } from "../../src/security/InternalAssertion.js"
import { answerProblems, ErrorsUrl, ProblemMiddlewareLive } from "../../src/http/ProblemResponse.js"
import { aroundRouter } from "../../src/http/Server.js"
import { CurrentExchange, type Exchange } from "../../src/http/RequestObservation.js"
import { AssertionAuthenticationLive, OperatorAuthenticationLive } from "../../src/security/ServiceAuthentication.js"

const secret = "a-secret-for-middleware-tests-of-32-chars-or-more"
const tenantId = "5d7c9a3e-1b2f-4c6d-8e9f-0a1b2c3d4e5f"
const reader = new CallerIdentity({ tenantId, subject: "sub-1", role: "viewer", scope: "read" })
const scimToken = new CallerIdentity({ tenantId, subject: "scim:6f1c1f4e-4d43-4f0e-9a57-0c2f9f0f3a11", role: "scim", scope: "write" })
const operator = new CallerIdentity({ tenantId: "00000000-0000-0000-0000-000000000000", subject: "operator:alice", role: "operator", scope: "admin" })

/** What the handlers were reached with: each entry is a request that got past the authentication. */
const executed: Array<string> = []
const logged: Array<string> = []

const PublicTestApi = HttpApi.make("referentialLike").add(ApplicationsGroup).middleware(Problems)
const PublicLive = HttpApiBuilder.layer(PublicTestApi).pipe(
  Layer.provide(HttpApiBuilder.group(PublicTestApi, "applications", (handlers) =>
    handlers
      .handle("listApplications", () => Effect.as(Effect.sync(() => executed.push("list")), []))
      .handle("getApplication", ({ params }) =>
        Effect.flatMap(Caller, (caller) => {
          executed.push(`get ${params.code} for ${caller.subject}`)
          return Effect.fail(new NotFound({ detail: "none" }))
        }))
      .handle("listApplicationChanges", () => Effect.succeed([])))),
  Layer.provide(AssertionAuthenticationLive)
)

/** Endpoints the tests here never call. */
const unused = () => Effect.die("not called by these tests")

const AdminLive = HttpApiBuilder.layer(GatewayAdminApi).pipe(
  Layer.provide(HttpApiBuilder.group(GatewayAdminApi, "gatewayAdmin", (handlers) =>
    handlers
      .handle("createPat", ({ payload }) =>
        Effect.sync(() => {
          executed.push(`create for ${payload.userSub}`)
          return new CreatedPat({ id: "33333333-3333-4333-8333-333333333333", token: "t", tokenPrefix: "ap_pat_t", scope: payload.scope, expiresAt: DateTime.makeUnsafe(0) })
        }))
      .handle("revokePat", () => Effect.succeed(new RevokedPat({ id: "33333333-3333-4333-8333-333333333333", revokedAt: DateTime.makeUnsafe(0) })))
      .handle("listPats", unused)
      .handle("filePatRequest", unused)
      .handle("listPatRequests", unused)
      .handle("approvePatRequest", unused)
      .handle("denyPatRequest", unused)
      .handle("createPartnerClient", unused)
      .handle("listPartnerClients", unused)
      .handle("rotatePartnerSecret", unused)
      .handle("disablePartnerClient", unused)
      .handle("enablePartnerClient", unused)
      .handle("createScimToken", unused)
      .handle("listScimTokens", unused)
      .handle("revokeScimToken", unused)
      .handle("listGatewaySecurityEvents", unused))),
  Layer.provide(OperatorAuthenticationLive)
)

const capturingLogger = Logger.make(({ fiber, message }) => {
  logged.push(`${Array.isArray(message) ? message.join(" ") : String(message)} ${JSON.stringify(fiber.getRef(References.CurrentLogAnnotations))}`)
})

/** The record each request was given, as `serveApi` gives one: what the authentication told it. */
const exchanges: Array<Exchange> = []
const recorded = HttpMiddleware.make((app) =>
  Effect.suspend(() => {
    const exchange: Exchange = { route: undefined, tenant: undefined, tokenPrefix: undefined, requestId: undefined, span: undefined }
    exchanges.push(exchange)
    return Effect.provideService(app, CurrentExchange, exchange)
  })
)

const served = <E, R>(api: Layer.Layer<never, E, R>) =>
  HttpRouter.serve(
    Layer.mergeAll(Layer.provide(api, ProblemMiddlewareLive), aroundRouter((app) => recorded(answerProblems(app)))),
    { disableLogger: true, disableListenLog: true }
  ).pipe(
    Layer.provideMerge(NodeHttpServer.layerTest),
    Layer.provide(InternalSecret.fixed(secret)),
    Layer.provide(Layer.succeed(ErrorsUrl, "https://errors.test/api")),
    Layer.provide(Logger.layer([capturingLogger]))
  )

/** Sends the target as given, byte for byte: HTTP clients resolve dot segments before sending. */
const raw = (request: { readonly method: string; readonly target: string; readonly body?: string; readonly assertion?: string }) =>
  Effect.flatMap(HttpServer.HttpServer, (server) =>
    Effect.callback<{ status: number; body: any }>((resume) => {
      const port = server.address._tag === "UnixPathAddress" ? 0 : server.address.port
      const headers: Record<string, string> = request.assertion === undefined ? {} : { "x-portfolio-assertion": request.assertion }
      if (request.body !== undefined) Object.assign(headers, { "content-type": "application/json", "content-length": String(Buffer.byteLength(request.body)) })
      const outgoing = http.request({ host: "127.0.0.1", port, method: request.method, path: request.target, headers }, (response) => {
        let text = ""
        response.setEncoding("utf8").on("data", (chunk: string) => (text += chunk))
        response.on("end", () => resume(Effect.succeed({ status: response.statusCode ?? 0, body: text === "" ? undefined : JSON.parse(text) })))
      })
      outgoing.end(request.body)
    }))

const signedFor = (caller: CallerIdentity, request: AssertedRequest) => signAssertion(secret, caller, request)
const unauthenticated = (detail: string) => ({ status: 401, body: expect.objectContaining({ errorCode: "UNAUTHENTICATED", detail }) })

describe("the services' authentication by internal assertion", () => {
  layer(served(PublicLive), { excludeTestServices: true })("a public API", (it) => {
    const app1 = "/api/v1/referentiel/applications/APP-0001"
    it.effect("executes exactly what was signed, once", () =>
      Effect.gen(function*() {
        const assertion = signedFor(reader, { audience: "referential", method: "GET", target: app1 })
        expect((yield* raw({ method: "GET", target: app1, assertion })).status).toBe(404)
        expect(executed.at(-1)).toBe("get APP-0001 for sub-1")
        const before = executed.length
        expect(yield* raw({ method: "GET", target: app1, assertion })).toEqual(unauthenticated("The internal assertion has already been used."))
        expect(executed.length).toBe(before)
      }))

    it.effect("tells the request's record the caller's tenant once the assertion holds, and no tenant otherwise", () =>
      Effect.gen(function*() {
        yield* raw({ method: "GET", target: "/api/v1/referentiel/applications", assertion: signedFor(reader, { audience: "referential", method: "GET", target: "/api/v1/referentiel/applications" }) })
        expect(exchanges.at(-1)!.tenant).toBe(tenantId)
        yield* raw({ method: "GET", target: "/api/v1/referentiel/applications", assertion: signedFor(reader, { audience: "provisioning", method: "GET", target: "/api/v1/referentiel/applications" }) })
        expect(exchanges.at(-1)!.tenant).toBeUndefined()
      }))

    it.effect("refuses the assertion on any other target, before any handler runs", () =>
      Effect.gen(function*() {
        const assertion = () => signedFor(reader, { audience: "referential", method: "GET", target: app1 })
        const before = executed.length
        for (
          const target of [
            "/api/v1/referentiel/applications/APP-0002;/../APP-0001",
            "/api/v1/referentiel/applications/APP-0002/../APP-0001",
            "/api/v1/referentiel/applications/APP-0002/%2e%2e/APP-0001",
            "/api/v1/referentiel/applications/APP-0001?limit=1",
            "/api/v1/referentiel/applications/APP-0001;x"
          ]
        ) {
          // Refused by the assertion (401), or not routed at all (404): either way no handler ran.
          expect([401, 404]).toContain((yield* raw({ method: "GET", target, assertion: assertion() })).status)
        }
        expect(executed.length).toBe(before)
        expect(yield* raw({ method: "GET", target: "/api/v1/referentiel/applications/APP-0002;/../APP-0001", assertion: assertion() })).toEqual(
          unauthenticated("The internal assertion was signed for another method, path or query.")
        )
      }))

    it.effect("refuses an assertion addressed to another service, or for a body the request does not carry", () =>
      Effect.gen(function*() {
        const toProvisioning = signedFor(reader, { audience: "provisioning", method: "GET", target: app1 })
        expect(yield* raw({ method: "GET", target: app1, assertion: toProvisioning })).toEqual(unauthenticated("The internal assertion is addressed to another service."))
        const withBody = signedFor(reader, { audience: "referential", method: "GET", target: app1, body: "{}" })
        expect(yield* raw({ method: "GET", target: app1, assertion: withBody })).toEqual(unauthenticated("The internal assertion was signed for another request body."))
        const withoutBody = signedFor(reader, { audience: "referential", method: "GET", target: app1 })
        expect(yield* raw({ method: "GET", target: app1, body: "{}", assertion: withoutBody })).toEqual(unauthenticated("The internal assertion was signed for another request body."))
      }))

    it.effect("refuses a SCIM token's assertion with 403, before any handler runs: it acts on SCIM's endpoints only", () =>
      Effect.gen(function*() {
        const before = executed.length
        for (const target of [app1, "/api/v1/referentiel/applications"]) {
          const assertion = signedFor(scimToken, { audience: "referential", method: "GET", target })
          expect(yield* raw({ method: "GET", target, assertion })).toEqual({
            status: 403,
            body: expect.objectContaining({ errorCode: "INSUFFICIENT_SCOPE", detail: "A SCIM token acts on SCIM's endpoints only." })
          })
        }
        expect(executed.length).toBe(before)
      }))

    it.effect("logs each refusal's reason at Warn, never the assertion", () =>
      Effect.gen(function*() {
        const assertion = signedFor(reader, { audience: "referential", method: "GET", target: "/api/v1/referentiel/applications" })
        yield* raw({ method: "GET", target: "/api/v1/referentiel/applications?status=ACTIVE", assertion })
        const line = logged.filter((entry) => entry.includes("internal assertion refused")).at(-1)
        expect(line).toContain("\"reason\":\"wrong-target\"")
        expect(line).toContain("/api/v1/referentiel/applications")
        expect(logged.some((entry) => entry.includes(assertion.split(".")[2]!))).toBe(false)
      }))
  })

  layer(served(AdminLive), { excludeTestServices: true })("an admin API", (it) => {
    const body = JSON.stringify({ tenantId, userSub: "sub-admin", email: "a@x.test", role: "tenant-admin", scope: "write" })
    it.effect("reads the body for its digest and still hands it to the handler", () =>
      Effect.gen(function*() {
        const assertion = signedFor(operator, { audience: "gateway", method: "POST", target: "/admin/pats", body })
        expect((yield* raw({ method: "POST", target: "/admin/pats", body, assertion })).status).toBe(201)
        expect(executed.at(-1)).toBe("create for sub-admin")
        // An operator acts for no tenant of its own: the line names none.
        expect(exchanges.at(-1)!.tenant).toBeUndefined()
      }))

    it.effect("refuses a captured operator assertion with another body or on another endpoint", () =>
      Effect.gen(function*() {
        const revoke = JSON.stringify({ tokenOrId: "33333333-3333-4333-8333-333333333333" })
        const captured = () => signedFor(operator, { audience: "gateway", method: "POST", target: "/admin/pats/revoke", body: revoke })
        const before = executed.length
        expect(yield* raw({ method: "POST", target: "/admin/pats;/../pats/revoke", body, assertion: captured() })).toEqual(
          unauthenticated("The internal assertion was signed for another method, path or query.")
        )
        expect(yield* raw({ method: "POST", target: "/admin/pats/revoke", body: revoke.replace("33333333-3333", "44444444-4444"), assertion: captured() })).toEqual(
          unauthenticated("The internal assertion was signed for another request body.")
        )
        expect(executed.length).toBe(before)
      }))

    it.effect("keeps the scopes apart: a tenant's assertion is no operator's", () =>
      Effect.gen(function*() {
        const assertion = signedFor(reader, { audience: "gateway", method: "POST", target: "/admin/pats", body })
        expect((yield* raw({ method: "POST", target: "/admin/pats", body, assertion })).status).toBe(403)
      }))
  })
})
