import { Conflict, type CreateScimTokenRequest, NotFound, ScimTokensPerTenantMax, ScimTokenWithSecret, trusted } from "@portfolio/domain"
import { newId } from "@portfolio/platform/ids"
import { UnitOfWork } from "@portfolio/platform/sql"
import { DateTime, Effect, Option } from "effect"
import type { AdminCall } from "../domain/OperatorActions.js"
import { generateScimToken, ScimTokenRecord, scimTokenView } from "../domain/ScimToken.js"
import { ScimTokenCache } from "../ports/ScimTokenCache.js"
import { ScimTokenRepository } from "../ports/ScimTokenRepository.js"
import { recordAction } from "./SecurityLog.js"

const tooMany = () =>
  new Conflict({
    detail: `This tenant has ${ScimTokensPerTenantMax} active SCIM tokens, the most allowed: revoke the one the identity tool no longer uses, then make a new one.`
  })

/**
 * Makes a SCIM token for a tenant's identity tool; the token is in the answer and nowhere else,
 * ever. At most `ScimTokensPerTenantMax` active ones, the one in use and its replacement during a
 * rotation (docs/scim.md): the count and the insert run under the tenant's creation lock, so that
 * racing creations cannot make one more. `createdBy` is the caller's subject: an operator's name,
 * or `console:<e-mail>` of the tenant-admin the console acts for.
 */
export const createScimToken = Effect.fn("gateway.createScimToken")(function*(tenantId: string, request: CreateScimTokenRequest, by: AdminCall) {
  const store = yield* ScimTokenRepository
  const unitOfWork = yield* UnitOfWork
  const now = yield* DateTime.now
  const token = generateScimToken()
  const record = new ScimTokenRecord({
    id: yield* newId,
    tenantId,
    label: request.label,
    tokenHash: token.tokenHash,
    tokenPrefix: token.tokenPrefix,
    createdBy: by.subject,
    createdAt: now,
    lastUsedAt: null,
    revokedAt: null
  })
  yield* unitOfWork.run(
    Effect.gen(function*() {
      if ((yield* store.lockActiveOf(tenantId)) >= ScimTokensPerTenantMax) return yield* tooMany()
      yield* store.insert(record)
      yield* recordAction(by, now, {
        tenantId,
        action: "scim_token_created",
        target: record.id,
        detail: { label: record.label, tokenPrefix: record.tokenPrefix }
      })
    })
  )
  yield* Effect.logInfo("SCIM token created", { id: record.id, tokenPrefix: record.tokenPrefix, tenantId })
  return trusted(ScimTokenWithSecret, { ...scimTokenView(record), token: token.token })
})

/** A tenant's SCIM tokens, never the tokens themselves: the active ones first, then the revoked ones, newest first in each. */
export const listScimTokens = Effect.fn("gateway.listScimTokens")(function*(tenantId: string) {
  const store = yield* ScimTokenRepository
  return (yield* store.listByTenant(tenantId)).map(scimTokenView)
})

/**
 * Revokes a tenant's token, at once on this replica and within the cache's second on the others.
 * Another tenant's token reads as unknown, with the same answer. Revoking again answers the token
 * as revoked the first time, and records nothing more.
 */
export const revokeScimToken = Effect.fn("gateway.revokeScimToken")(function*(tenantId: string, id: string, by: AdminCall) {
  const store = yield* ScimTokenRepository
  const cache = yield* ScimTokenCache
  const unitOfWork = yield* UnitOfWork
  const now = yield* DateTime.now
  const { alreadyRevoked, token } = yield* unitOfWork.run(
    Effect.gen(function*() {
      const revocation = yield* store.revoke(tenantId, id, now)
      if (Option.isNone(revocation)) return yield* new NotFound({ detail: "This tenant has no SCIM token of this id." })
      const { alreadyRevoked, token } = revocation.value
      if (!alreadyRevoked) {
        yield* recordAction(by, now, { tenantId, action: "scim_token_revoked", target: id, detail: { label: token.label, tokenPrefix: token.tokenPrefix } })
      }
      return revocation.value
    })
  )
  // Once committed: a check between an earlier invalidation and the commit would cache it unrevoked again.
  yield* cache.invalidate(id)
  if (!alreadyRevoked) yield* Effect.logInfo("SCIM token revoked", { id, tokenPrefix: token.tokenPrefix, tenantId })
  return scimTokenView(token)
})
