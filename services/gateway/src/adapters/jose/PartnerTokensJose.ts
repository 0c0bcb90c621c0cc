import { Scope, Unauthenticated, Uuid } from "@portfolio/domain"
import { Effect, Layer, Schema } from "effect"
import { type CryptoKey, importJWK, type JWSAlgorithm, jwtVerify, SignJWT } from "jose"
import { randomUUID } from "node:crypto"
import { GatewaySettings, type SigningJwk, signingKeysConfig } from "../../Config.js"
import { makeExpiringLru } from "@portfolio/platform/cache"
import { type PartnerAccess, PartnerTokenLifetimeSeconds, PartnerTokens } from "../../ports/PartnerTokens.js"

/** RFC 9068's media type of a JWT access token: a token of another kind signed by the same key is refused. */
const AccessTokenType = "at+jwt"

interface VerifyingKey {
  readonly alg: JWSAlgorithm
  readonly key: CryptoKey
}

const algOf = (jwk: SigningJwk): JWSAlgorithm => (jwk.kty === "EC" ? "ES256" : "EdDSA")

const publicJwkOf = (jwk: SigningJwk): Record<string, string> =>
  jwk.kty === "EC"
    ? { kty: "EC", crv: jwk.crv, x: jwk.x, y: jwk.y, kid: jwk.kid, alg: "ES256", use: "sig" }
    : { kty: "OKP", crv: jwk.crv, x: jwk.x, kid: jwk.kid, alg: "EdDSA", use: "sig" }

const Claims = Schema.Struct({ client_id: Schema.String, tenant_id: Uuid, scope: Scope, exp: Schema.Number })
const decodeClaims = Schema.decodeUnknownOption(Claims)

const refused = new Unauthenticated({ detail: "The access token is not valid: unknown key, bad signature or claims, or expired." })

/**
 * Verified tokens are remembered until they expire, so that a partner's next requests with the
 * same token cost a map lookup rather than a signature check; 10,000 tokens in use at once.
 */
const verifiedCacheSize = 10_000

/**
 * The jose adapter of `PartnerTokens`. The keys are imported once at start (a key jose cannot
 * import stops the gateway with the variable named); verification picks the key by `kid`, pins
 * the algorithm to that key's (so `alg: none` or a swapped algorithm never verifies), and checks
 * type, issuer, audience and expiry against the Effect clock.
 */
export const PartnerTokensJoseWith = (jwks: ReadonlyArray<SigningJwk>) =>
  Layer.effect(
    PartnerTokens,
    Effect.gen(function*() {
      const issuer = (yield* GatewaySettings).publicBaseUrl
      const imported = yield* Effect.tryPromise({
        try: () =>
          Promise.all(jwks.map(async (jwk) => {
            const alg = algOf(jwk)
            const { d: _, ...publicPart } = jwk
            return {
              kid: jwk.kid,
              alg,
              signing: (await importJWK({ ...jwk }, alg)) as CryptoKey,
              verifying: (await importJWK({ ...publicPart }, alg)) as CryptoKey
            }
          })),
        catch: (cause) => new Error(`OAUTH_SIGNING_KEYS: a key could not be imported (${String(cause)})`)
      })
      const signer = imported[0]!
      const verifying = new Map<string, VerifyingKey>(imported.map((k) => [k.kid, { alg: k.alg, key: k.verifying }]))
      const algorithms = [...new Set(imported.map((k) => k.alg))]
      const verified = makeExpiringLru<PartnerAccess>(verifiedCacheSize)

      const verifyPromise = async (token: string, nowMs: number): Promise<PartnerAccess | undefined> => {
        try {
          const { payload } = await jwtVerify(token, (header) => {
            const known = header.kid === undefined ? undefined : verifying.get(header.kid)
            if (known === undefined || known.alg !== header.alg) throw new Error("unknown key")
            return known.key
          }, { algorithms, typ: AccessTokenType, issuer, audience: issuer, currentDate: new Date(nowMs), requiredClaims: ["exp", "client_id", "tenant_id", "scope"] })
          const claims = decodeClaims(payload)
          if (claims._tag === "None") return undefined
          return { clientId: claims.value.client_id, tenantId: claims.value.tenant_id, scope: claims.value.scope, expiresAtMs: claims.value.exp * 1000 }
        } catch {
          return undefined
        }
      }

      return PartnerTokens.of({
        issue: (access, nowMs) => {
          const iat = Math.floor(nowMs / 1000)
          return Effect.map(
            Effect.promise(() =>
              new SignJWT({ client_id: access.clientId, tenant_id: access.tenantId, scope: access.scope })
                .setProtectedHeader({ alg: signer.alg, kid: signer.kid, typ: AccessTokenType })
                .setIssuer(issuer)
                .setAudience(issuer)
                .setSubject(access.clientId)
                .setIssuedAt(iat)
                .setExpirationTime(iat + PartnerTokenLifetimeSeconds)
                .setJti(randomUUID())
                .sign(signer.signing)
            ),
            (token) => ({ token, expiresIn: PartnerTokenLifetimeSeconds })
          )
        },
        verify: (token, nowMs) => {
          const known = verified.get(token, nowMs)
          if (known !== undefined) return Effect.succeed(known)
          return Effect.flatMap(Effect.promise(() => verifyPromise(token, nowMs)), (access) => {
            if (access === undefined) return Effect.fail(refused)
            verified.set(token, access, access.expiresAtMs)
            return Effect.succeed(access)
          })
        },
        jwks: { keys: jwks.map(publicJwkOf) }
      })
    })
  )

/** The adapter on the keys of `OAUTH_SIGNING_KEYS`. */
export const PartnerTokensJose = Layer.unwrap(Effect.map(signingKeysConfig, PartnerTokensJoseWith))
