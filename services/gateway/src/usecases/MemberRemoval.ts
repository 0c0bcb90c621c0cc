import { PatRepository } from "../ports/PatRepository.js"
import type { MemberRemoved } from "@portfolio/domain"
import { UnitOfWork } from "@portfolio/platform/sql"
import { DateTime, Effect } from "effect"
import { RequesterRemovedReason } from "../domain/PatRequestRules.js"
import { CachedHolders } from "../ports/CachedHolders.js"
import { PatRequestRepository } from "../ports/PatRequestRepository.js"

/**
 * A member removed from a tenant loses at once what they held there (docs/product-rules.md#invitations-and-members):
 * their tokens are revoked, and their pending PAT requests are closed, so that no admin approves a
 * grant for someone who left. Only tokens issued and requests filed before the removal are touched,
 * so redelivered or replayed events are harmless, and so is every replica running it for the same
 * event: the first revokes and closes, and each drops the holder from its own cache only once the
 * store says revoked, so that no replica can read the tokens back as valid after evicting them.
 */
export const applyMemberRemoval = Effect.fn("gateway.applyMemberRemoval")(function*(event: MemberRemoved) {
  const store = yield* PatRepository
  const requests = yield* PatRequestRepository
  const cached = yield* CachedHolders
  const unitOfWork = yield* UnitOfWork
  const holder = { tenantId: event.tenantId, userSub: event.userSub }
  const now = yield* DateTime.now
  const { closed, revoked } = yield* unitOfWork.run(
    Effect.all({
      revoked: store.revokeHolder(holder, event.occurredAt, now),
      closed: requests.closeHolder(holder, event.occurredAt, now, RequesterRemovedReason)
    })
  )
  yield* cached.evict(holder)
  if (revoked.length > 0 || closed.length > 0) {
    yield* Effect.logInfo("access of a removed member ended", { eventId: event.id, tenantId: event.tenantId, tokensRevoked: revoked.length, requestsClosed: closed.length })
  }
  return { revoked, closed }
})
