import { PartnerClientId } from "@portfolio/domain"
import { Result, Schema } from "effect"

/**
 * The token endpoint's request (RFC 6749 sections 2.3.1, 3.3, 4.4.2) read from its parts, before
 * any client is looked up, and the errors of section 5.2. Pure: the adapter hands it the body as
 * text and the two headers. docs/product-rules.md#partner-clients.
 */

export type OAuthErrorCode = "invalid_request" | "invalid_client" | "unsupported_grant_type" | "invalid_scope"

export interface OAuthError {
  readonly error: OAuthErrorCode
  readonly description: string
  /** Whether the client authenticated (or tried to) with HTTP Basic: an `invalid_client` then answers 401 with a challenge. */
  readonly basic: boolean
}

export interface TokenRequest {
  readonly clientId: string
  readonly clientSecret: string
  /** The scopes asked for, or none: then the client's own. */
  readonly scopes: ReadonlyArray<string> | undefined
  readonly basic: boolean
}

/** The words of every `invalid_client` about the credentials themselves, whatever was wrong with them. */
export const UnknownClientDescription = "The client is unknown, its secret is wrong, or it is disabled."

/** The grammar of the ids clients are made with (`service-partner-<name>`), as the admin API and the CLI check them. */
const isClientId = Schema.is(PartnerClientId)

const fail = (error: OAuthErrorCode, description: string, basic: boolean) => Result.fail<OAuthError>({ error, description, basic })

/** RFC 6749 section 2.3.1: the id and secret are form-encoded before Basic joins them. */
const formDecode = (text: string): string | undefined => {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "))
  } catch {
    return undefined
  }
}

const basicCredentials = (authorization: string): { readonly id: string; readonly secret: string } | undefined => {
  const match = /^basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(authorization)
  if (match === null) return undefined
  const decoded = Buffer.from(match[1]!, "base64").toString("utf8")
  const colon = decoded.indexOf(":")
  if (colon < 0) return undefined
  const id = formDecode(decoded.slice(0, colon))
  const secret = formDecode(decoded.slice(colon + 1))
  return id === undefined || secret === undefined ? undefined : { id, secret }
}

/** A scope-token (RFC 6749 section 3.3): printable ASCII but space, `"` and `\`. */
const scopeToken = /^[\x21\x23-\x5B\x5D-\x7E]+$/

export const parseTokenRequest = (input: {
  readonly contentType: string | undefined
  readonly authorization: string | undefined
  readonly body: string
}): Result.Result<TokenRequest, OAuthError> => {
  const basicGiven = input.authorization !== undefined && /^basic(\s|$)/i.test(input.authorization.trim())
  const mediaType = (input.contentType ?? "").split(";")[0]!.trim().toLowerCase()
  if (mediaType !== "application/x-www-form-urlencoded") {
    return fail("invalid_request", "The request body must be application/x-www-form-urlencoded.", basicGiven)
  }
  const params = new URLSearchParams(input.body)
  const repeated = [...new Set([...params.keys()].filter((name, index, all) => all.indexOf(name) !== index))]
  if (repeated.length > 0) return fail("invalid_request", `The parameter '${repeated[0]}' is given more than once.`, basicGiven)
  const grantType = params.get("grant_type")
  if (grantType === null || grantType === "") return fail("invalid_request", "The parameter 'grant_type' is missing.", basicGiven)
  if (grantType !== "client_credentials") {
    return fail("unsupported_grant_type", "Only the grant type 'client_credentials' is supported.", basicGiven)
  }
  const bodyId = params.get("client_id")
  const bodySecret = params.get("client_secret")
  let credentials: { readonly id: string; readonly secret: string }
  if (basicGiven) {
    const basic = basicCredentials(input.authorization!.trim())
    if (basic === undefined) return fail("invalid_client", "The Basic credentials cannot be read as client_id:client_secret.", true)
    if (bodySecret !== null) return fail("invalid_request", "The client authenticated twice: use HTTP Basic or client_secret in the body, not both.", true)
    if (bodyId !== null && bodyId !== basic.id) return fail("invalid_request", "The client_id of the body is not the one of the Basic credentials.", true)
    credentials = basic
  } else if (bodyId !== null && bodySecret !== null) {
    credentials = { id: bodyId, secret: bodySecret }
  } else {
    return fail("invalid_client", "The client did not authenticate: send HTTP Basic credentials, or client_id and client_secret.", bodyId === null)
  }
  // An id no client can have (a NUL, which PostgreSQL's text refuses, 300 characters...) is an
  // unknown client, answered as one before any lookup.
  if (!isClientId(credentials.id)) return fail("invalid_client", UnknownClientDescription, basicGiven)
  const scope = params.get("scope")
  if (scope === null) return Result.succeed({ clientId: credentials.id, clientSecret: credentials.secret, scopes: undefined, basic: basicGiven })
  const scopes = scope.split(" ")
  if (scopes.some((s) => !scopeToken.test(s))) return fail("invalid_scope", "The scope must be scope tokens separated by single spaces.", basicGiven)
  return Result.succeed({ clientId: credentials.id, clientSecret: credentials.secret, scopes, basic: basicGiven })
}
