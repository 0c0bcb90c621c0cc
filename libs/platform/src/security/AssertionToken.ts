import { CallerIdentity, trusted } from "@portfolio/domain"
import { Result, Schema } from "effect"
import { createHash, createHmac, createSecretKey, type KeyObject, randomUUID, timingSafeEqual } from "node:crypto"
import { DefaultPorts, type ServiceName } from "../config/Ports.js"

/**
 * The internal assertion as a token: a JWS in compact form (RFC 7515), HS256, whose claims bind
 * the caller to one exact request. The rules and their reasons are in docs/security.md
 * ("The internal assertion"); this module is the codec, pure and synchronous. It signs with
 * node:crypto rather than jose: on the gateway's hot path that is several times faster
 * (libs/platform/test/bench/assertion-signing.ts) for the same standard bytes, which jose
 * verifies and produces interchangeably (AssertionToken.test.ts holds it so).
 */

/** The service an assertion is addressed to, as the contracts name it. */
export type Audience = ServiceName

/** Explicit typing (RFC 8725 §3.11): no other JWT signed with the same secret can pass for an assertion. */
export const AssertionType = "portfolio-assertion+jwt"
/** How long an assertion is valid after it is signed. */
export const AssertionLifetimeSeconds = 30
/** The longest lifetime a verifier accepts: the bound of its memory of used ids. */
const MaxAssertionLifetimeSeconds = 60
/** How far ahead of the verifier's clock a signer's may be. */
const ClockSkewSeconds = 5

export interface AssertionTarget {
  readonly audience: Audience
  readonly method: string
  /** The request target exactly as on the wire, in origin form: path and query (`/path?query`). */
  readonly target: string
}

export interface AssertedRequest extends AssertionTarget {
  /** The body exactly as sent; absent or empty for none. */
  readonly body?: Uint8Array | string | undefined
}

export type AssertionFailure =
  | "missing"
  | "malformed"
  | "bad-signature"
  | "expired"
  | "wrong-audience"
  | "wrong-target"
  | "wrong-body"
  | "replayed"

/** An assertion whose signature, lifetime, audience and target hold; its body and its id are checked apart. */
export interface OpenedAssertion {
  readonly identity: CallerIdentity
  /** `bdh`: base64url SHA-256 of the body the assertion was signed for. */
  readonly bodyDigest: string
  readonly id: string
  readonly expiresAtMs: number
}

export const EmptyBodyDigest = createHash("sha256").update("").digest("base64url")

/** base64url SHA-256 of the body's bytes (a string counts as its UTF-8 bytes). */
export const bodyDigest = (body: Uint8Array | string | undefined): string =>
  body === undefined || body.length === 0 ? EmptyBodyDigest : createHash("sha256").update(body).digest("base64url")

/**
 * base64url SHA-256 of the request target as it goes on the wire. The claim carries the digest
 * rather than the target: a path may be as long as the request head allows (16 KiB), and the
 * assertion rides in that same head, so carrying the target would halve what a path may hold.
 */
export const targetDigest = (target: string): string => createHash("sha256").update(target, "utf8").digest("base64url")

interface AssertionKey {
  readonly kid: string
  readonly key: KeyObject
  /** The encoded protected header of what this key signs. */
  readonly header: string
}

const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64url")

/**
 * The key id names a secret without revealing it (an HMAC of a fixed label), so that a verifier
 * holding two secrets during a rotation knows which one to try.
 */
const assertionKey = (secret: string): AssertionKey => {
  const key = createSecretKey(Buffer.from(secret, "utf8"))
  const kid = createHmac("sha256", key).update("portfolio internal assertion key id").digest("base64url").slice(0, 16)
  return { kid, key, header: b64(JSON.stringify({ alg: "HS256", typ: AssertionType, kid })) }
}

// The gateway signs with the same secret string on every request: its key is derived once.
const keys = new Map<string, AssertionKey>()
const keyOf = (secret: string): AssertionKey => {
  const known = keys.get(secret)
  if (known !== undefined) return known
  if (keys.size >= 16) keys.clear()
  const key = assertionKey(secret)
  keys.set(secret, key)
  return key
}

const signatureOf = (key: KeyObject, signingInput: string) => createHmac("sha256", key).update(signingInput).digest("base64url")

export interface SignOptions {
  readonly nowMs?: number
  readonly lifetimeSeconds?: number
}

/** Signs `identity` for exactly one request: its audience, method, target and body, once, briefly. */
export const signAssertion = (secret: string, identity: CallerIdentity, request: AssertedRequest, options: SignOptions = {}): string => {
  const key = keyOf(secret)
  const iat = Math.floor((options.nowMs ?? Date.now()) / 1000)
  const claims = {
    sub: identity.subject,
    tenant: identity.tenantId,
    role: identity.role,
    scope: identity.scope,
    aud: request.audience,
    htm: request.method.toUpperCase(),
    thd: targetDigest(request.target),
    bdh: bodyDigest(request.body),
    iat,
    exp: iat + (options.lifetimeSeconds ?? AssertionLifetimeSeconds),
    // 122 random bits; randomUUID draws from an entropy cache, where randomBytes(16) is a call into
    // the system's generator per request (1.4% of the gateway's CPU, measured).
    jti: randomUUID()
  }
  const signingInput = `${key.header}.${b64(JSON.stringify(claims))}`
  return `${signingInput}.${signatureOf(key.key, signingInput)}`
}

const Header = Schema.Struct({ alg: Schema.Literal("HS256"), typ: Schema.Literal(AssertionType), kid: Schema.String })
const decodeHeader = Schema.decodeUnknownResult(Header, { onExcessProperty: "error" })

const Claims = Schema.Struct({
  sub: CallerIdentity.fields.subject,
  tenant: CallerIdentity.fields.tenantId,
  role: CallerIdentity.fields.role,
  scope: CallerIdentity.fields.scope,
  // Every service of `DefaultPorts`, so a service added there can be addressed without touching this codec.
  aud: Schema.Literals(Object.keys(DefaultPorts) as Array<Audience>),
  htm: Schema.String,
  thd: Schema.String,
  bdh: Schema.String,
  iat: Schema.Int,
  exp: Schema.Int,
  jti: Schema.String.check(Schema.isMinLength(16), Schema.isMaxLength(64))
})
const decodeClaims = Schema.decodeUnknownResult(Claims)

const parsePart = (encoded: string): unknown => {
  try {
    return JSON.parse(Buffer.from(encoded, "base64url").toString("utf8"))
  } catch {
    return undefined
  }
}

/**
 * The secrets a verifier accepts (`INTERNAL_SECRET` and, during a rotation,
 * `INTERNAL_SECRET_PREVIOUS`), by the exact encoded header each signs with: the header of a
 * genuine assertion is found without decoding it.
 */
export type VerificationKeys = ReadonlyMap<string, KeyObject>

export const verificationKeys = (secrets: string | ReadonlyArray<string>): VerificationKeys =>
  new Map((typeof secrets === "string" ? [secrets] : secrets).map((secret) => {
    const { key, header } = assertionKey(secret)
    return [header, key] as const
  }))

const base64urlShape = /^[A-Za-z0-9_-]+$/

/**
 * Everything but the body and the single use: the token's form, its signature by a known secret,
 * its lifetime, its audience, and its method and target compared byte for byte with the request's.
 */
export const openAssertion = (
  keys: VerificationKeys,
  header: string | undefined,
  request: AssertionTarget,
  nowMs: number
): Result.Result<OpenedAssertion, AssertionFailure> => {
  if (header === undefined || header.length === 0) return Result.fail("missing")
  const parts = header.split(".")
  if (parts.length !== 3 || !parts.every((part) => base64urlShape.test(part))) return Result.fail("malformed")
  const [encodedHeader, encodedClaims, signature] = parts as [string, string, string]
  const key = keys.get(encodedHeader)
  if (key === undefined) {
    // Not a header of ours: a well-formed one names a secret this process does not hold.
    return Result.isFailure(decodeHeader(parsePart(encodedHeader))) ? Result.fail("malformed") : Result.fail("bad-signature")
  }
  const expected = Buffer.from(signatureOf(key, `${encodedHeader}.${encodedClaims}`))
  const given = Buffer.from(signature)
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return Result.fail("bad-signature")
  const decoded = decodeClaims(parsePart(encodedClaims))
  if (Result.isFailure(decoded)) return Result.fail("malformed")
  const claims = decoded.success
  // Only a holder of the secret gets here: a lifetime beyond the bound, or an issue time ahead of
  // the clock, is a signer's bug that the memory of used ids must not have to cover.
  if (claims.exp <= claims.iat || claims.exp - claims.iat > MaxAssertionLifetimeSeconds) return Result.fail("malformed")
  if (claims.iat * 1000 > nowMs + ClockSkewSeconds * 1000) return Result.fail("malformed")
  if (claims.exp * 1000 <= nowMs) return Result.fail("expired")
  if (claims.aud !== request.audience) return Result.fail("wrong-audience")
  if (claims.htm !== request.method.toUpperCase() || claims.thd !== targetDigest(request.target)) return Result.fail("wrong-target")
  return Result.succeed({
    // The claims' schema is the identity's, field for field: validating twice would only cost time.
    identity: trusted(CallerIdentity, { tenantId: claims.tenant, subject: claims.sub, role: claims.role, scope: claims.scope }),
    bodyDigest: claims.bdh,
    id: claims.jti,
    expiresAtMs: claims.exp * 1000
  })
}

/**
 * `openAssertion` and the body: what a test, or a caller holding the whole request, checks in one
 * call. The single use is the verifying process's (see `AssertionVerifier`).
 */
export const verifyAssertion = (
  secrets: string | ReadonlyArray<string> | VerificationKeys,
  header: string | undefined,
  request: AssertedRequest,
  nowMs = Date.now()
): Result.Result<OpenedAssertion, AssertionFailure> => {
  const keys = secrets instanceof Map ? secrets : verificationKeys(secrets as string | ReadonlyArray<string>)
  return Result.flatMap(openAssertion(keys, header, request, nowMs), (opened) =>
    opened.bodyDigest === bodyDigest(request.body) ? Result.succeed(opened) : Result.fail("wrong-body" as const))
}
