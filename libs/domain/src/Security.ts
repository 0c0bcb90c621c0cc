import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "effect/http-api"
import { Caller } from "./Caller.js"
import { asProblem, InsufficientScope, InvalidRequest, RateLimited, Unauthenticated, Unavailable } from "./Errors.js"

/**
 * Authentication of a public call. On the wire it is a Bearer PAT checked by the gateway; inside
 * the platform the services implement the same middleware by verifying the gateway's signed
 * internal assertion, which yields the `Caller`.
 */
export class Authentication extends HttpApiMiddleware.Service<Authentication, { provides: Caller }>()("Authentication", {
  error: [asProblem(Unauthenticated), asProblem(InsufficientScope)],
  security: {
    pat: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(
        OpenApi.Description,
        "Personal access token, sent as `Authorization: Bearer ap_pat_...`. A token carries the scope `read` or `write`; `write` includes `read`."
      ),
      HttpApiSecurity.annotate(OpenApi.Format, "ap_pat_<30 base62><6 base62 CRC32>")
    )
  }
}) {}

/**
 * Authentication of the operator on the services' admin APIs (never routed by the gateway): an
 * internal assertion with the `admin` scope, signed with the platform's internal secret.
 */
export class OperatorAuthentication extends HttpApiMiddleware.Service<OperatorAuthentication, { provides: Caller }>()("OperatorAuthentication", {
  error: [asProblem(Unauthenticated), asProblem(InsufficientScope)]
}) {}

/**
 * The errors a whole API answers besides its endpoints' own: a request its schemas refuse (400),
 * and for some APIs a rate limit or an unavailable dependency. Effect 4 has no API-wide errors, so
 * each set is the error of a middleware that the API adds after its groups (`.middleware(Problems)`),
 * the outermost one. The platform gives every one of them the same implementation
 * (`problemMiddlewares`): it answers each failure with its problem+json body.
 */
export class Problems extends HttpApiMiddleware.Service<Problems>()("Problems", {
  error: [asProblem(InvalidRequest)]
}) {}

/** The public API's: also 429 and 503, which the gateway answers for every public operation. */
export class PublicProblems extends HttpApiMiddleware.Service<PublicProblems>()("PublicProblems", {
  error: [asProblem(InvalidRequest), asProblem(RateLimited), asProblem(Unavailable)]
}) {}

/** The gateway's admin API's: also 503, when provisioning or the database does not answer. */
export class GatewayAdminProblems extends HttpApiMiddleware.Service<GatewayAdminProblems>()("GatewayAdminProblems", {
  error: [asProblem(InvalidRequest), asProblem(Unavailable)]
}) {}

/** Every API-wide problems middleware, for the platform to implement them all alike. */
export const problemMiddlewares = [Problems, PublicProblems, GatewayAdminProblems] as const
