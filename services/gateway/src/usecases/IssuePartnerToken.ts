import { type Scope, type Unavailable } from "@portfolio/domain"
import { Clock, Effect, Result, Option } from "effect"
import { secretMatches } from "../domain/PartnerClient.js"
import { type OAuthError, type TokenRequest, UnknownClientDescription } from "../domain/TokenRequest.js"
import { PartnerClientRepository } from "../ports/PartnerClientRepository.js"
import { PartnerTokens } from "../ports/PartnerTokens.js"

export interface IssuedToken {
  readonly accessToken: string
  readonly expiresIn: number
  readonly scope: Scope
}

/**
 * The scope granted: what was asked for, never beyond the client's (`write` includes `read`), the
 * client's own when nothing was asked for.
 */
const grantedScope = (client: Scope, asked: ReadonlyArray<string> | undefined): Result.Result<Scope, string> => {
  if (asked === undefined) return Result.succeed(client)
  const unknown = asked.find((s) => s !== "read" && s !== "write")
  if (unknown !== undefined) return Result.fail(`The scope '${unknown}' does not exist: the scopes are 'read' and 'write'.`)
  const wanted: Scope = asked.includes("write") ? "write" : "read"
  return wanted === "write" && client === "read"
    ? Result.fail("The scope 'write' is beyond this client's, which is 'read'.")
    : Result.succeed(wanted)
}

/**
 * Client credentials (RFC 6749 section 4.4): authenticates the client by its current secret, or
 * its previous one during a rotation's grace, and signs a token of the tenant and scope. An unknown
 * client, a wrong secret and a disabled client are one and the same `invalid_client`, so that the
 * answer reveals nothing of which client ids exist.
 */
export const issuePartnerToken = Effect.fn("gateway.issuePartnerToken")(function*(request: TokenRequest) {
  const invalidClient: OAuthError = { error: "invalid_client", description: UnknownClientDescription, basic: request.basic }
  const store = yield* PartnerClientRepository
  const found = yield* store.find(request.clientId)
  const nowMs = yield* Clock.currentTimeMillis
  if (Option.isNone(found) || !secretMatches(found.value, request.clientSecret, nowMs) || found.value.disabledAt !== null) {
    return Result.fail<OAuthError>(invalidClient)
  }
  const client = found.value
  const scope = grantedScope(client.scope, request.scopes)
  if (Result.isFailure(scope)) return Result.fail<OAuthError>({ error: "invalid_scope", description: scope.failure, basic: request.basic })
  const { expiresIn, token } = yield* (yield* PartnerTokens).issue({ clientId: client.clientId, tenantId: client.tenantId, scope: scope.success }, nowMs)
  yield* Effect.annotateCurrentSpan("partner.client_id", client.clientId)
  yield* Effect.logInfo("partner access token issued", { clientId: client.clientId, tenantId: client.tenantId, scope: scope.success })
  return Result.succeed<IssuedToken>({ accessToken: token, expiresIn, scope: scope.success })
}) satisfies (request: TokenRequest) => Effect.Effect<Result.Result<IssuedToken, OAuthError>, Unavailable, PartnerClientRepository | PartnerTokens>
