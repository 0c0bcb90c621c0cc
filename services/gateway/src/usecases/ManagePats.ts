import { type ArbRole, CreatedPat, type CreatePatRequest, NotFound, PatSummary, RevokedPat, type Scope, Uuid } from "@portfolio/domain"
import { PatCache } from "../ports/PatCache.js"
import { PatRecord } from "../domain/PatRecord.js"
import { type Holder, PatRepository, type PatSelector } from "../ports/PatRepository.js"
import { newId } from "@portfolio/platform/ids"
import { UnitOfWork } from "@portfolio/platform/sql"
import { DateTime, Effect, Option, Schema } from "effect"
import type { AdminCall } from "../domain/OperatorActions.js"
import { generatePat, parsePat } from "../domain/Pat.js"
import { recordAction } from "./SecurityLog.js"

export interface PatGrant {
  readonly tenantId: string
  readonly userSub: string
  readonly email: string
  readonly role: ArbRole
  readonly scope: Scope
  readonly days: number
}

/**
 * A new token of `grant`'s holder, valid `days` from `now`: its record, to be stored, and the
 * answer that shows the token, the only place it ever appears.
 */
export const mintPat = Effect.fn("gateway.mintPat")(function*(grant: PatGrant, now: DateTime.Utc) {
  const pat = generatePat()
  const record = new PatRecord({
    id: yield* newId,
    tokenHash: pat.tokenHash,
    tokenPrefix: pat.tokenPrefix,
    tenantId: grant.tenantId,
    userSub: grant.userSub,
    email: grant.email,
    role: grant.role,
    scope: grant.scope,
    createdAt: now,
    expiresAt: DateTime.add(now, { days: grant.days }),
    revokedAt: null,
    lastUsedAt: null
  })
  const created = new CreatedPat({ id: record.id, token: pat.token, tokenPrefix: pat.tokenPrefix, scope: record.scope, expiresAt: record.expiresAt })
  return { record, created }
})

/**
 * Issues a PAT for a tenant member; the token is in the answer and nowhere else, ever (its entry in
 * the security log has the prefix).
 */
export const createPat = Effect.fn("gateway.createPat")(function*(request: CreatePatRequest, by: AdminCall) {
  const store = yield* PatRepository
  const unitOfWork = yield* UnitOfWork
  const now = yield* DateTime.now
  const { created, record } = yield* mintPat(request, now)
  yield* unitOfWork.run(
    Effect.andThen(
      store.insert(record),
      recordAction(by, now, {
        tenantId: record.tenantId,
        action: "pat_created",
        target: record.id,
        detail: {
          userSub: record.userSub,
          email: record.email,
          scope: record.scope,
          tokenPrefix: record.tokenPrefix,
          expiresAt: DateTime.formatIso(record.expiresAt)
        }
      })
    )
  )
  yield* Effect.logInfo("personal access token created", {
    id: record.id,
    tokenPrefix: record.tokenPrefix,
    tenantId: record.tenantId,
    scope: record.scope,
    expiresAt: DateTime.formatIso(record.expiresAt)
  })
  return created
})

/** A member's tokens still in force, newest first, as they may see them (docs/product-rules.md#pat-requests). */
export const listPats = Effect.fn("gateway.listPats")(function*(holder: Holder) {
  const store = yield* PatRepository
  const records = yield* store.listActive(holder, yield* DateTime.now)
  return records.map((record) =>
    new PatSummary({
      id: record.id,
      tokenPrefix: record.tokenPrefix,
      scope: record.scope,
      createdAt: record.createdAt,
      expiresAt: record.expiresAt,
      lastUsedAt: record.lastUsedAt
    })
  )
})

const isUuid = Schema.is(Uuid)

/**
 * Revokes by id or by the token itself; revoking twice keeps the first revocation time. With a
 * holder (a member revoking their own), another's token reads as unknown.
 */
export const revokePat = Effect.fn("gateway.revokePat")(function*(tokenOrId: string, by: AdminCall, holder?: Holder) {
  const notFound = new NotFound({ detail: "No personal access token has this id or value." })
  const selector: Option.Option<PatSelector> = isUuid(tokenOrId)
    ? Option.some({ id: tokenOrId })
    : Option.map(parsePat(tokenOrId), (pat) => ({ tokenHash: pat.tokenHash }))
  if (Option.isNone(selector)) return yield* notFound
  const store = yield* PatRepository
  const cache = yield* PatCache
  const unitOfWork = yield* UnitOfWork
  const now = yield* DateTime.now
  const { id, revokedAt, tokenPrefix } = yield* unitOfWork.run(
    Effect.gen(function*() {
      const revoked = yield* store.revoke(selector.value, now, holder)
      if (Option.isNone(revoked) || revoked.value.revokedAt === null) return yield* notFound
      const { id, revokedAt, tenantId, tokenPrefix } = revoked.value
      // Named by its id even when revoked by the token itself, which the log never holds.
      yield* recordAction(by, now, { tenantId, action: "pat_revoked", target: id, detail: { tokenPrefix } })
      return { id, revokedAt, tokenPrefix }
    })
  )
  // Once committed: a check between an earlier invalidation and the commit would cache it unrevoked again.
  yield* cache.invalidate(id)
  yield* Effect.logInfo("personal access token revoked", { id, tokenPrefix, by: holder === undefined ? "operator" : "holder" })
  return new RevokedPat({ id, revokedAt })
})
