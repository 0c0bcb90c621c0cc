import { HttpServerRequest } from "@effect/platform"
import { Authentication, InsufficientScope, OperatorAuthentication, Unauthenticated } from "@portfolio/domain"
import { Effect, Either, Layer } from "effect"
import { AssertionHeader, InternalSecret, verifyAssertion } from "./InternalAssertion.js"

const describe = {
  missing: "This service answers only requests forwarded by the gateway.",
  malformed: "The internal assertion is malformed.",
  "bad-signature": "The internal assertion is not signed by the gateway.",
  expired: "The internal assertion has expired."
} as const

const verifyRequest = Effect.gen(function*() {
  const secret = yield* InternalSecret
  const request = yield* HttpServerRequest.HttpServerRequest
  const header = request.headers[AssertionHeader]
  const path = new URL(request.url, "http://x").pathname
  const result = verifyAssertion(secret, header, { method: request.method, path })
  if (Either.isLeft(result)) return yield* new Unauthenticated({ detail: describe[result.left] })
  return result.right
})

/**
 * The services' side of `Authentication`: the Bearer token the contract documents is the gateway's
 * business; here only the gateway's signed assertion counts.
 */
export const AssertionAuthenticationLive = Layer.effect(
  Authentication,
  Effect.map(InternalSecret, (secret) =>
    Authentication.of({
      pat: () =>
        Effect.flatMap(verifyRequest, (identity) =>
          identity.scope === "admin"
            ? Effect.fail(new InsufficientScope({ detail: "Operator assertions are for the admin API." }))
            : Effect.succeed(identity)).pipe(Effect.provideService(InternalSecret, secret))
    }))
)

/** The admin APIs accept only operator assertions (scope `admin`). */
export const OperatorAuthenticationLive = Layer.effect(
  OperatorAuthentication,
  Effect.map(InternalSecret, (secret) =>
    Effect.flatMap(verifyRequest, (identity) =>
      identity.scope === "admin"
        ? Effect.succeed(identity)
        : Effect.fail(new InsufficientScope({ detail: "The admin API requires an operator assertion with scope 'admin'." }))).pipe(
        Effect.provideService(InternalSecret, secret)
      ))
)
