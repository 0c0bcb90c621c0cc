import { HttpRouter, HttpServerRequest } from "effect/http"
import { Authentication, Caller, type CallerIdentity, InsufficientScope, OperatorAuthentication, Unauthenticated } from "@portfolio/domain"
import { Clock, Effect, Result, Layer, Option } from "effect"
import { audienceOfRoute } from "./AssertionAudience.js"
import { carriesBody, requestTarget } from "../http/RequestGuards.js"
import { AssertionHeader, type AssertionFailure, AssertionVerifier, type AssertionVerifierShape, bodyDigest, EmptyBodyDigest } from "./InternalAssertion.js"
import { CurrentExchange } from "../http/RequestObservation.js"

const describe: Record<AssertionFailure, string> = {
  missing: "This service answers only requests forwarded by the gateway.",
  malformed: "The internal assertion is malformed.",
  "bad-signature": "The internal assertion is not signed by the gateway.",
  expired: "The internal assertion has expired.",
  "wrong-audience": "The internal assertion is addressed to another service.",
  "wrong-target": "The internal assertion was signed for another method, path or query.",
  "wrong-body": "The internal assertion was signed for another request body.",
  replayed: "The internal assertion has already been used."
}

/**
 * The body's digest as the handler will read it. `text` is memoised by the node request, so the
 * handler decodes the very text digested here; a body that is not UTF-8 is not the one signed
 * (the gateway refuses such bodies before signing).
 */
const digestOf = (request: HttpServerRequest.HttpServerRequest) =>
  carriesBody(request.headers) ? Effect.map(request.text, bodyDigest) : Effect.succeed(EmptyBodyDigest)

const refuse = (reason: AssertionFailure, request: HttpServerRequest.HttpServerRequest, route: string) =>
  // The reason and the route, never the token nor the URL (which may carry search terms).
  Effect.andThen(
    Effect.logWarning("internal assertion refused").pipe(Effect.annotateLogs({ reason, "http.request.method": request.method, "http.route": route })),
    Effect.fail(new Unauthenticated({ detail: describe[reason] }))
  )

/**
 * Checks the request's assertion against exactly what this service is about to execute: the
 * audience of the route its router matched, the method, the request target as received (the
 * router reads the same string, no normalisation between them), the body, and the first use.
 * The body is read only once the signature holds, so that no stranger makes a service buffer one.
 */
/** A route as its router declared it (`/admin/tenants/:slug`), which names the assertion's audience. */
interface DeclaredRoute {
  readonly method: string
  readonly path: string
}

const verifyRequest = (verifier: AssertionVerifierShape, route: DeclaredRoute) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const nowMs = yield* Clock.currentTimeMillis
    const audience = audienceOfRoute(route.method, route.path)
    if (audience === undefined) return yield* refuse("wrong-audience", request, route.path)
    const opened = verifier.open(request.headers[AssertionHeader], { audience, method: request.method, target: requestTarget(request) }, nowMs)
    if (Result.isFailure(opened)) return yield* refuse(opened.failure, request, route.path)
    const digest = yield* Effect.orElseSucceed(digestOf(request), () => undefined)
    if (digest !== opened.success.bodyDigest) return yield* refuse("wrong-body", request, route.path)
    if (!verifier.firstUse(opened.success, nowMs)) return yield* refuse("replayed", request, route.path)
    const { identity } = opened.success
    // The request's line names the tenant it acted for; an operator acts for none.
    const exchange = yield* Effect.serviceOption(CurrentExchange)
    if (Option.isSome(exchange) && identity.role !== "operator") exchange.value.tenant = identity.tenantId
    return identity
  })

/**
 * The caller a request's assertion names, checked as `AssertionAuthenticationLive` checks it, for
 * routes mounted beside an HttpApi rather than in it (provisioning's SCIM routes, whose media type
 * the HttpApi cannot decode): the route must be one of a contract's, as the router declared it.
 * Fails with `Unauthenticated`; what the caller may do is the route's to decide.
 */
export const assertedCaller = Effect.gen(function*() {
  const verifier = yield* AssertionVerifier
  const { route } = yield* HttpRouter.RouteContext
  return yield* verifyRequest(verifier, route)
})

const requireScope = (admin: boolean, detail: string) => (identity: CallerIdentity) =>
  (identity.scope === "admin") === admin ? Effect.succeed(identity) : Effect.fail(new InsufficientScope({ detail }))

/**
 * A SCIM token's caller (docs/scim.md) acts on the SCIM endpoints only, which read it through
 * `assertedCaller` and check its role themselves: no HttpApi route of any service answers it, even
 * should the gateway forward one there.
 */
const refuseScim = (identity: CallerIdentity) =>
  identity.role === "scim" ? Effect.fail(new InsufficientScope({ detail: "A SCIM token acts on SCIM's endpoints only." })) : Effect.succeed(identity)

/**
 * The services' side of `Authentication`: the Bearer token the contract documents is the gateway's
 * business; here only the gateway's signed assertion counts, and never a SCIM token's (`refuseScim`).
 */
export const AssertionAuthenticationLive = Layer.effect(
  Authentication,
  Effect.map(AssertionVerifier, (verifier) =>
    Authentication.of({
      pat: (httpEffect, { endpoint }) =>
        verifyRequest(verifier, endpoint).pipe(
          Effect.flatMap(requireScope(false, "Operator assertions are for the admin API.")),
          Effect.flatMap(refuseScim),
          Effect.flatMap((identity) => Effect.provideService(httpEffect, Caller, identity))
        )
    }))
)

/** The admin APIs accept only operator assertions (scope `admin`). */
export const OperatorAuthenticationLive = Layer.effect(
  OperatorAuthentication,
  Effect.map(AssertionVerifier, (verifier) =>
    OperatorAuthentication.of((httpEffect, { endpoint }) =>
      verifyRequest(verifier, endpoint).pipe(
        Effect.flatMap(requireScope(true, "The admin API requires an operator assertion with scope 'admin'.")),
        Effect.flatMap((identity) => Effect.provideService(httpEffect, Caller, identity))
      )))
)
