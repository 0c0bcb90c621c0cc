import { CallerIdentity } from "@portfolio/domain"
import { Config, Context, Effect, Either, Layer, Redacted, Schema } from "effect"
import { createHmac, timingSafeEqual } from "node:crypto"

/**
 * The signed statement by which the gateway (or the operator CLI) tells a service who is calling.
 * `<base64url(JSON claims)>.<base64url(HMAC-SHA256(secret, "v1.<claims>.<METHOD> <path>"))>`.
 * The signature covers the method and path, so an assertion captured for one request cannot be
 * replayed against another endpoint, and it expires after `ttlMs` (60 s by default).
 */
export const AssertionHeader = "x-portfolio-assertion"

const Claims = Schema.Struct({
  tenantId: Schema.UUID,
  subject: Schema.String,
  role: CallerIdentity.fields.role,
  scope: CallerIdentity.fields.scope,
  exp: Schema.Number
})
const decodeClaims = Schema.decodeUnknownEither(Schema.parseJson(Claims))

const sign = (secret: string, claims: string, method: string, path: string) =>
  createHmac("sha256", secret).update(`v1.${claims}.${method.toUpperCase()} ${path}`).digest()

export interface AssertionRequest {
  readonly method: string
  /** Path without query string. */
  readonly path: string
}

export const signAssertion = (
  secret: string,
  identity: CallerIdentity,
  request: AssertionRequest,
  now = Date.now(),
  ttlMs = 60_000
): string => {
  const claims = Buffer.from(
    JSON.stringify({ tenantId: identity.tenantId, subject: identity.subject, role: identity.role, scope: identity.scope, exp: now + ttlMs })
  ).toString("base64url")
  return `${claims}.${sign(secret, claims, request.method, request.path).toString("base64url")}`
}

export type AssertionFailure = "missing" | "malformed" | "bad-signature" | "expired"

export const verifyAssertion = (
  secret: string,
  header: string | undefined,
  request: AssertionRequest,
  now = Date.now()
): Either.Either<CallerIdentity, AssertionFailure> => {
  if (header === undefined || header.length === 0) return Either.left("missing")
  const dot = header.indexOf(".")
  if (dot <= 0 || dot === header.length - 1) return Either.left("malformed")
  const claims = header.slice(0, dot)
  const given = Buffer.from(header.slice(dot + 1), "base64url")
  const expected = sign(secret, claims, request.method, request.path)
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return Either.left("bad-signature")
  const decoded = decodeClaims(Buffer.from(claims, "base64url").toString("utf8"))
  if (Either.isLeft(decoded)) return Either.left("malformed")
  if (decoded.right.exp <= now) return Either.left("expired")
  const { exp: _exp, ...identity } = decoded.right
  return Either.right(new CallerIdentity(identity))
}

/** The shared secret of the internal assertions, from `INTERNAL_SECRET` (at least 32 characters). */
export class InternalSecret extends Context.Tag("@portfolio/platform/InternalSecret")<InternalSecret, string>() {
  static readonly layer = Layer.effect(
    InternalSecret,
    Config.redacted("INTERNAL_SECRET").pipe(
      Config.validate({ message: "INTERNAL_SECRET must be at least 32 characters", validation: (s) => Redacted.value(s).length >= 32 }),
      Effect.map(Redacted.value)
    )
  )
}
