import { CreatedPat, type CreatePatRequest, NotFound, RevokedPat } from "@portfolio/domain"
import { PatCache } from "../ports/PatCache.js"
import { PatRecord } from "../domain/PatRecord.js"
import { PatStore, type PatSelector } from "../ports/PatStore.js"
import { newId } from "@portfolio/platform"
import { DateTime, Effect, Option, Schema } from "effect"
import { generatePat, parsePat } from "../domain/Pat.js"

/** Issues a PAT for a tenant member; the token is in the answer and nowhere else, ever. */
export const createPat = Effect.fn("gateway.createPat")(function*(request: CreatePatRequest) {
  const store = yield* PatStore
  const now = yield* DateTime.now
  const pat = generatePat()
  const record = new PatRecord({
    id: yield* newId,
    tokenHash: pat.tokenHash,
    tokenPrefix: pat.tokenPrefix,
    tenantId: request.tenantId,
    userSub: request.userSub,
    email: request.email,
    role: request.role,
    scope: request.scope,
    createdAt: now,
    expiresAt: DateTime.add(now, { days: request.days }),
    revokedAt: null,
    lastUsedAt: null
  })
  yield* store.insert(record)
  yield* Effect.logInfo("personal access token created", {
    id: record.id,
    tokenPrefix: record.tokenPrefix,
    tenantId: record.tenantId,
    scope: record.scope,
    expiresAt: DateTime.formatIso(record.expiresAt)
  })
  return new CreatedPat({ id: record.id, token: pat.token, tokenPrefix: pat.tokenPrefix, scope: record.scope, expiresAt: record.expiresAt })
})

const isUuid = Schema.is(Schema.UUID)

/** Revokes by id or by the token itself; revoking twice keeps the first revocation time. */
export const revokePat = Effect.fn("gateway.revokePat")(function*(tokenOrId: string) {
  const notFound = new NotFound({ detail: "No personal access token has this id or value." })
  const selector: Option.Option<PatSelector> = isUuid(tokenOrId)
    ? Option.some({ id: tokenOrId })
    : Option.map(parsePat(tokenOrId), (pat) => ({ tokenHash: pat.tokenHash }))
  if (Option.isNone(selector)) return yield* notFound
  const store = yield* PatStore
  const cache = yield* PatCache
  const revoked = yield* store.revoke(selector.value, yield* DateTime.now)
  if (Option.isNone(revoked) || revoked.value.revokedAt === null) return yield* notFound
  yield* cache.invalidate(revoked.value.id)
  yield* Effect.logInfo("personal access token revoked", { id: revoked.value.id, tokenPrefix: revoked.value.tokenPrefix })
  return new RevokedPat({ id: revoked.value.id, revokedAt: revoked.value.revokedAt })
})
