import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Caller } from "./Caller.js"
import { asProblem, InsufficientScope, Unauthenticated } from "./Errors.js"

/**
 * Authentication of a public call. On the wire it is a Bearer PAT checked by the gateway; inside
 * the platform the services implement the same middleware by verifying the gateway's signed
 * internal assertion, which yields the `Caller`.
 */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("Authentication", {
  provides: Caller,
  failure: Schema.Union(asProblem(Unauthenticated), asProblem(InsufficientScope)),
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
export class OperatorAuthentication extends HttpApiMiddleware.Tag<OperatorAuthentication>()("OperatorAuthentication", {
  provides: Caller,
  failure: Schema.Union(asProblem(Unauthenticated), asProblem(InsufficientScope))
}) {}
