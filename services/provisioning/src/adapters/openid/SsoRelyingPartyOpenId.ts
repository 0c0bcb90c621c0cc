import { Effect, Layer, Redacted } from "effect"
import * as openid from "openid-client"
import { ProviderUnreachable, type SsoClient, SsoCheckFailed, SsoRelyingParty } from "../../ports/SsoRelyingParty.js"
import { guardedFetch } from "./GuardedFetch.js"
import { describeFailure, isUnreachable } from "./IssuerDiscoveryOpenId.js"

/**
 * The relying party is openid-client's (OpenID Certified): PKCE with S256, `state` and `nonce` from
 * its generators, and on the way back the checks of the callback (`state`, `iss`) and of the id
 * token (issuer; audience; expiry within its 30 s tolerance; nonce). The id token's signature is
 * checked too, by a key of the provider's JWKS with an algorithm it announces, never `none` nor a
 * shared-secret one: openid-client skips that check by default for a token fetched from the token
 * endpoint over TLS (OpenID Connect Core 3.1.3.7), and `enableNonRepudiationChecks` turns it on,
 * so that a token endpoint's answer is worth no more than the provider's signature.
 *
 * The provider's configuration (discovery document, keys) is read again for every begin and
 * every finish: sign-ins come at a person's pace, and a provider that rotated its keys or moved an
 * endpoint is then followed at once, where a kept configuration would refuse new keys for a while.
 */
const configurationOf = (client: SsoClient) =>
  Effect.tryPromise({
    try: () =>
      openid.discovery(new URL(client.issuer), client.clientId, undefined, openid.ClientSecretBasic(Redacted.value(client.clientSecret)), {
        timeout: 10,
        // Kept by the configuration for the token endpoint and the keys too.
        [openid.customFetch]: guardedFetch(client.allowHttp),
        execute: [
          openid.enableNonRepudiationChecks,
          ...(client.allowHttp && client.issuer.startsWith("http:") ? [openid.allowInsecureRequests] : [])
        ]
      }),
    catch: (error) => new ProviderUnreachable({ reason: describeFailure(error) })
  })

const scopesFor = (client: SsoClient, metadata: openid.ServerMetadata) =>
  ["openid", "email", "profile", ...(client.roleClaim !== null && metadata.scopes_supported?.includes(client.roleClaim) ? [client.roleClaim] : [])].join(" ")

export const SsoRelyingPartyOpenId = Layer.succeed(
  SsoRelyingParty,
  SsoRelyingParty.of({
    begin: (client) =>
      Effect.gen(function*() {
        const configuration = yield* configurationOf(client)
        const codeVerifier = openid.randomPKCECodeVerifier()
        const state = openid.randomState()
        const nonce = openid.randomNonce()
        const codeChallenge = yield* Effect.promise(() => openid.calculatePKCECodeChallenge(codeVerifier))
        const url = openid.buildAuthorizationUrl(configuration, {
          redirect_uri: client.redirectUri,
          scope: scopesFor(client, configuration.serverMetadata()),
          code_challenge: codeChallenge,
          code_challenge_method: "S256",
          state,
          nonce
        })
        return { authorizationUrl: url.href, state, nonce, codeVerifier }
      }).pipe(Effect.withSpan("SsoRelyingParty.begin", { attributes: { "sso.issuer": client.issuer } })),
    finish: (client, callbackUrl, expected) =>
      Effect.gen(function*() {
        const configuration = yield* configurationOf(client)
        const tokens = yield* Effect.tryPromise({
          try: () =>
            openid.authorizationCodeGrant(configuration, callbackUrl, {
              pkceCodeVerifier: expected.codeVerifier,
              expectedState: expected.state,
              expectedNonce: expected.nonce,
              idTokenExpected: true
            }),
          catch: (error) =>
            isUnreachable(error)
              ? new ProviderUnreachable({ reason: describeFailure(error, "its token endpoint") })
              : new SsoCheckFailed({ reason: `the provider's answer failed a check (${error instanceof Error ? error.message : String(error)})` })
        })
        const claims = tokens.claims()
        if (claims === undefined) return yield* new SsoCheckFailed({ reason: "the provider answered no id token" })
        return {
          subject: claims.sub,
          email: typeof claims["email"] === "string" ? claims["email"] : undefined,
          claims: { ...claims }
        }
      }).pipe(Effect.withSpan("SsoRelyingParty.finish", { attributes: { "sso.issuer": client.issuer } }))
  })
)
