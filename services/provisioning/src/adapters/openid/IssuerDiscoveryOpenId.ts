import { Effect, Layer } from "effect"
import * as openid from "openid-client"
import { IssuerDiscovery, type IssuerMetadata, IssuerRefused } from "../../ports/IssuerDiscovery.js"
import { guardedFetch, NotPublic } from "./GuardedFetch.js"

// The id tokens of a connection must be signed with a key pair: a shared-secret algorithm would let
// whoever holds the client secret (us included) mint them.
const asymmetric = /^(RS|PS|ES)(256|384|512)$|^EdDSA$|^Ed25519$/

// The network's own error sits some causes down: openid-client's, then fetch's "fetch failed".
const causesOf = (error: unknown) => {
  const chain: Array<Error> = []
  for (let at: unknown = error; at instanceof Error && chain.length < 5; at = at.cause) chain.push(at)
  return chain
}

const networkCode = (link: Error) => "code" in link && typeof link.code === "string" && /^E[A-Z_]+$/.test(link.code)

/**
 * Whether a failure is the provider out of reach (no answer, a refused address, a timeout), as
 * against an answer that failed openid-client's checks.
 */
export const isUnreachable = (error: unknown) =>
  causesOf(error).some((link) => link.name === "TimeoutError" || link.message === "fetch failed" || networkCode(link))

/** Why a network or protocol failure happened, in words an operator can act on. */
export const describeFailure = (error: unknown, what = "its discovery document"): string => {
  const chain = causesOf(error)
  if (chain.some((link) => link.name === "TimeoutError")) return `${what} did not answer within 10 seconds`
  const refused = chain.find((link) => "code" in link && link.code === NotPublic)
  if (refused !== undefined) return `${what} cannot be fetched: ${refused.message}`
  const code = chain.find(networkCode)
  if (code !== undefined) return `${what} could not be reached (${(code as Error & { code: string }).code})`
  if (chain.some((link) => link.message === "fetch failed")) return `${what} could not be reached (${chain.at(-1)!.message})`
  return `${what} was refused (${chain[0]?.message ?? String(error)})`
}

const check = (metadata: openid.ServerMetadata, allowHttp: boolean): IssuerMetadata | string => {
  const { authorization_endpoint, jwks_uri, token_endpoint } = metadata
  if (authorization_endpoint === undefined || token_endpoint === undefined || jwks_uri === undefined) {
    return "its discovery document names no authorization_endpoint, token_endpoint or jwks_uri"
  }
  for (const endpoint of [authorization_endpoint, token_endpoint, jwks_uri]) {
    if (!endpoint.startsWith("https://") && !(allowHttp && endpoint.startsWith("http://"))) return `its endpoint ${endpoint} is not https`
  }
  if (metadata.response_types_supported !== undefined && !metadata.response_types_supported.includes("code")) {
    return "it does not offer the authorization code flow (response_types_supported has no \"code\")"
  }
  const algorithms = metadata.id_token_signing_alg_values_supported
  if (algorithms !== undefined && !algorithms.some((algorithm) => asymmetric.test(algorithm))) {
    return `it signs id tokens with none of the asymmetric algorithms we accept (it offers ${algorithms.join(", ")})`
  }
  // Providers that do not list their PKCE methods (Entra ID) still honour S256; one that lists them without it does not.
  if (metadata.code_challenge_methods_supported !== undefined && !metadata.code_challenge_methods_supported.includes("S256")) {
    return "it does not offer PKCE with S256 (code_challenge_methods_supported)"
  }
  return { issuer: metadata.issuer, authorizationEndpoint: authorization_endpoint, tokenEndpoint: token_endpoint, jwksUri: jwks_uri }
}

/**
 * Discovery by openid-client (an OpenID Certified relying party): it fetches
 * `<issuer>/.well-known/openid-configuration` and refuses a document whose `issuer` is not the one
 * asked for, so that a connection can only name a provider that says it is that provider.
 */
export const IssuerDiscoveryOpenId = Layer.succeed(
  IssuerDiscovery,
  IssuerDiscovery.of({
    discover: (issuer, { allowHttp }) =>
      Effect.tryPromise({
        try: () =>
          openid.discovery(issuer, "discovery-check", undefined, undefined, {
            timeout: 10,
            [openid.customFetch]: guardedFetch(allowHttp),
            ...(allowHttp && issuer.protocol === "http:" ? { execute: [openid.allowInsecureRequests] } : {})
          }),
        catch: (error) => new IssuerRefused({ reason: describeFailure(error) })
      }).pipe(
        Effect.flatMap((configuration) => {
          const checked = check(configuration.serverMetadata(), allowHttp)
          return typeof checked === "string" ? Effect.fail(new IssuerRefused({ reason: checked })) : Effect.succeed(checked)
        }),
        Effect.withSpan("IssuerDiscovery.discover", { attributes: { "sso.issuer": issuer.href } })
      )
  })
)
