import { HttpIncomingMessage, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { PublicApiPrefix } from "@portfolio/domain"
import { ErrorsUrl, problemResponse } from "@portfolio/platform/http"
import { ByteSize, Effect, Result } from "effect"
import { type OAuthError, parseTokenRequest } from "../../domain/TokenRequest.js"
import { PartnerTokens } from "../../ports/PartnerTokens.js"
import { issuePartnerToken } from "../../usecases/IssuePartnerToken.js"

export const TokenPath = `${PublicApiPrefix}/oauth/token`
export const JwksPath = `${PublicApiPrefix}/.well-known/jwks.json`

/** Whether a request is for the token endpoint or the key set, which need no bearer token; HEAD as GET. */
export const isOAuthRequest = (method: string, path: string): boolean =>
  (method === "POST" && path === TokenPath) || ((method === "GET" || method === "HEAD") && path === JwksPath)

/** The route template of such a request, for its record; `undefined` for any other. */
export const oauthRoute = (method: string, path: string): string | undefined => (isOAuthRequest(method, path) ? path : undefined)

/** A token request is a few hundred bytes: anything near this is not one. */
const maxTokenRequestBytes = 16 * 1024

/** RFC 6749 section 5.1: neither a token nor an error about credentials may be cached. */
const noStore = { "cache-control": "no-store", pragma: "no-cache" }

/**
 * RFC 6749 section 5.2: `invalid_client` is 401 with a Basic challenge when the client used (or
 * could have used) Basic, 400 like every other error otherwise.
 */
const oauthError = (error: OAuthError) => {
  const challenge = error.error === "invalid_client" && error.basic
  return HttpServerResponse.jsonUnsafe({ error: error.error, error_description: error.description }, {
    status: challenge ? 401 : 400,
    headers: { ...noStore, ...(challenge ? { "www-authenticate": `Basic realm="partners", charset="UTF-8"` } : {}) }
  })
}

const headerOf = (request: HttpServerRequest.HttpServerRequest, name: string) => {
  const value = request.headers[name]
  return typeof value === "string" ? value : undefined
}

/**
 * The token endpoint (client credentials) and the JWK set of the keys that verify its tokens,
 * on the public port beside the documentation pages (docs/product-rules.md#partner-clients).
 */
export const makeOAuthEndpoints = Effect.gen(function*() {
  const tokens = yield* PartnerTokens
  const errorsUrl = yield* ErrorsUrl
  const jwks = HttpServerResponse.text(JSON.stringify(tokens.jwks), {
    contentType: "application/jwk-set+json",
    headers: { "cache-control": "public, max-age=300", "x-content-type-options": "nosniff" }
  })

  const token = (request: HttpServerRequest.HttpServerRequest) =>
    Effect.gen(function*() {
      const body = yield* request.text.pipe(Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(maxTokenRequestBytes)), Effect.result)
      if (Result.isFailure(body)) return oauthError({ error: "invalid_request", description: `The request body could not be read (at most ${maxTokenRequestBytes} bytes).`, basic: false })
      const parsed = parseTokenRequest({ contentType: headerOf(request, "content-type"), authorization: headerOf(request, "authorization"), body: body.success })
      if (Result.isFailure(parsed)) return oauthError(parsed.failure)
      const issued = yield* issuePartnerToken(parsed.success)
      if (Result.isFailure(issued)) return oauthError(issued.failure)
      return HttpServerResponse.jsonUnsafe({
        access_token: issued.success.accessToken,
        token_type: "Bearer",
        expires_in: issued.success.expiresIn,
        scope: issued.success.scope
      }, { headers: noStore })
    }).pipe(Effect.catchTag("Unavailable", (error) => Effect.succeed(problemResponse(errorsUrl, error.errorCode, error.detail, TokenPath))))

  /** The answer of an OAuth request (`isOAuthRequest`). */
  return (request: HttpServerRequest.HttpServerRequest, path: string) => (path === TokenPath ? token(request) : Effect.succeed(jwks))
})
