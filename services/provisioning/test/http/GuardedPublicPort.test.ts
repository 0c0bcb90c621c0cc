import { HttpApiBuilder } from "effect/http-api"
import { HttpClient, HttpClientRequest, type HttpClientResponse, HttpRouter, HttpServerRequest } from "effect/http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { expect, layer } from "@effect/vitest"
import { Authentication, Caller, CallerIdentity, Unauthenticated } from "@portfolio/domain"
import { answerProblems, ErrorsUrl, guardRequests, probes, ProblemMiddlewareLive, RouterConfig } from "@portfolio/platform/http"
import { AssertionHeader, AssertionVerifier, makeAssertionVerifier, signAssertion } from "@portfolio/platform/security"
import { Effect, Layer, Schema } from "effect"
import { AcceptancePageLive } from "../../src/adapters/http/AcceptancePage.js"
import { PublicHandlersLive } from "../../src/adapters/http/PublicHandlers.js"
import { ProvisioningPublicApi } from "../../src/adapters/http/ProvisioningPublicApi.js"
import { createInvitation, listInvitations } from "../../src/usecases/Invitations.js"
import { listMembers } from "../../src/usecases/Members.js"
import { provisionSsoMember } from "../../src/usecases/Tenants.js"
import { invite, lastMailTo, tenantWithAdmin, tokenOf } from "../support/Fixtures.js"
import { MemoryLayer } from "../support/Memory.js"

// The caller as a test header rather than a signed assertion: the guards are the subject here, and
// they answer before authentication anyway.
const callerHeader = "x-test-caller"
const secret = "a-secret-for-the-guarded-port-test-of-32-chars"
const decodeCaller = Schema.decodeUnknownEffect(Schema.fromJsonString(CallerIdentity))
const TestAuthentication = Layer.succeed(
  Authentication,
  Authentication.of({
    pat: (httpEffect) =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
        Effect.mapError(decodeCaller(request.headers[callerHeader]), () => new Unauthenticated({ detail: "No test caller." }))).pipe(
          Effect.flatMap((caller) => Effect.provideService(httpEffect, Caller, caller))
        )
  })
)

/** The public port as serveApi serves it once the request guards are wired, on the in-memory ports. */
const GuardedServer = HttpRouter.serve(
  Layer.mergeAll(
    Layer.merge(
      HttpApiBuilder.layer(ProvisioningPublicApi).pipe(Layer.provide(PublicHandlersLive.pipe(Layer.provide(TestAuthentication)))),
      AcceptancePageLive
    ).pipe(Layer.provide(ProblemMiddlewareLive)),
    HttpRouter.middleware((app) => probes(Effect.void)(guardRequests(ProvisioningPublicApi)(answerProblems(app))), { global: true })
  ),
  { routerConfig: RouterConfig, disableLogger: true, disableListenLog: true }
).pipe(
  Layer.provideMerge(NodeHttpServer.layerTest),
  Layer.provideMerge(Layer.succeed(ErrorsUrl, "https://errors.test/api")),
  // The guards read a JSON body only for a request whose assertion holds.
  Layer.provideMerge(Layer.succeed(AssertionVerifier, makeAssertionVerifier([secret]))),
  Layer.provideMerge(MemoryLayer())
)

const invitations = "/api/v1/tenant/invitations"

const send = (caller: CallerIdentity | undefined, request: HttpClientRequest.HttpClientRequest) =>
  Effect.flatMap(HttpClient.HttpClient, (client) =>
    client.execute(
      caller === undefined ? request : HttpClientRequest.setHeader(request, callerHeader, JSON.stringify(Schema.encodeSync(CallerIdentity)(caller)))
    ))

const problemOf = (response: HttpClientResponse.HttpClientResponse) =>
  Effect.map(response.json, (body) => ({ status: response.status, contentType: response.headers["content-type"], body }))

const expectProblem = (response: HttpClientResponse.HttpClientResponse, status: number, errorCode: string, instance: string) =>
  Effect.map(problemOf(response), (problem) =>
    expect(problem).toMatchObject({ status, contentType: "application/problem+json", body: { status, errorCode, instance } }))

layer(GuardedServer, { timeout: 30_000, excludeTestServices: true })("provisioning's public port behind the request guards", (it) => {
  it.effect("refuses an invitation that is not JSON with 415, creating nothing, and takes the same as JSON", () =>
    Effect.gen(function*() {
      const { caller, welcome } = yield* tenantWithAdmin("guard-media")
      const fields = { email: "form@guard-media.test", arbRole: "viewer" }
      const form = yield* send(caller, HttpClientRequest.post(invitations).pipe(HttpClientRequest.bodyUrlParams(fields)))
      yield* expectProblem(form, 415, "UNSUPPORTED_MEDIA_TYPE", invitations)
      const text = yield* send(caller, HttpClientRequest.post(invitations).pipe(HttpClientRequest.bodyText(JSON.stringify(fields), "text/plain")))
      yield* expectProblem(text, 415, "UNSUPPORTED_MEDIA_TYPE", invitations)
      // Only the admin's welcome link, made with the tenant.
      expect((yield* listInvitations(caller)).map((i) => i.id)).toEqual([welcome?.invitationId])
      const created = yield* send(caller, HttpClientRequest.post(invitations).pipe(HttpClientRequest.bodyJsonUnsafe(fields)))
      expect(created.status).toBe(201)
    }))

  it.effect("keeps the magic-link page's form post, which is no API endpoint", () =>
    Effect.gen(function*() {
      const { caller } = yield* tenantWithAdmin("guard-page")
      const invitation = yield* createInvitation(caller, invite("page@guard-page.test", "contributor"))
      const path = `/accept/${tokenOf(yield* lastMailTo("page@guard-page.test"))}`
      const password = "a fine long password for the page"
      const done = yield* send(undefined, HttpClientRequest.post(path).pipe(HttpClientRequest.bodyUrlParams({ password, confirm: password })))
      expect(done.status).toBe(200)
      expect(yield* done.text).toContain("You are in")
      expect((yield* listInvitations(caller)).find((i) => i.id === invitation.id)?.status).toBe("ACCEPTED")
    }))

  it.effect("answers deeply nested JSON with 400 rather than 500, once the request's assertion holds", () =>
    Effect.gen(function*() {
      const { caller, welcome } = yield* tenantWithAdmin("guard-deep")
      const deep = "[".repeat(3000) + "]".repeat(3000)
      const assertion = signAssertion(secret, caller, { audience: "provisioning", method: "POST", target: invitations, body: deep })
      const answer = yield* send(caller, HttpClientRequest.post(invitations).pipe(
        HttpClientRequest.setHeader(AssertionHeader, assertion),
        HttpClientRequest.bodyText(deep, "application/json")
      ))
      yield* expectProblem(answer, 400, "INVALID_REQUEST", invitations)
      expect((yield* listInvitations(caller)).map((i) => i.id)).toEqual([welcome?.invitationId])
    }))

  it.effect("does not read the body of a request whose assertion does not hold: authentication refuses it unread", () =>
    Effect.gen(function*() {
      const deep = "[".repeat(3000) + "]".repeat(3000)
      // No test caller either: what answers is authentication (401), not the depth check (400).
      const forged = yield* send(undefined, HttpClientRequest.post(invitations).pipe(
        HttpClientRequest.setHeader(AssertionHeader, "e30.e30.forged"),
        HttpClientRequest.bodyText(deep, "application/json")
      ))
      yield* expectProblem(forged, 401, "UNAUTHENTICATED", invitations)
      const none = yield* send(undefined, HttpClientRequest.post(invitations).pipe(HttpClientRequest.bodyText(deep, "application/json")))
      yield* expectProblem(none, 401, "UNAUTHENTICATED", invitations)
    }))

  it.effect("removes a member whose userSub is as long as the schema allows, and says 404 of an unknown one that long", () =>
    Effect.gen(function*() {
      const { caller, tenant } = yield* tenantWithAdmin("guard-long")
      const userSub = `sso|${"\u20ac".repeat(251)}`
      yield* provisionSsoMember({ slug: tenant.slug, userSub, email: "long@guard-long.test", arbRole: "viewer" })
      const path = `${invitations}/members/${encodeURIComponent(userSub)}`
      expect((yield* send(caller, HttpClientRequest.delete(path))).status).toBe(204)
      expect((yield* listMembers(caller)).map((member) => member.userSub)).not.toContain(userSub)
      const unknown = `${invitations}/members/${"u".repeat(255)}`
      const answer = yield* send(caller, HttpClientRequest.delete(unknown))
      expect(yield* problemOf(answer)).toMatchObject({ status: 404, body: { detail: "No member with this userSub in the tenant.", instance: unknown } })
    }))

  it.effect("refuses a ';' or an encoded slash in the path with 400, before authentication", () =>
    Effect.gen(function*() {
      for (const path of [`${invitations}/members/a;b`, `${invitations}/members/a%2Fb`, `${invitations};x`]) {
        yield* expectProblem(yield* send(undefined, HttpClientRequest.delete(path)), 400, "INVALID_REQUEST", path)
      }
    }))
})
