import { PatStore } from "../ports/PatStore.js"
import type { MemberRemoved } from "@portfolio/domain"
import { DateTime, Effect } from "effect"
import { CachedHolders } from "../ports/CachedHolders.js"

/**
 * A member removed from a tenant loses the tokens they held there at once (docs/product-rules.md#invitations-and-members). Only
 * tokens issued before the removal are touched, so redelivered or replayed events are harmless,
 * and so is every replica running it for the same event: the first revokes, and each drops the
 * holder from its own cache only once the store says revoked, so that no replica can read the
 * tokens back as valid after evicting them.
 */
export const revokeHolderPats = Effect.fn("gateway.revokeHolderPats")(function*(event: MemberRemoved) {
  const store = yield* PatStore
  const cached = yield* CachedHolders
  const holder = { tenantId: event.tenantId, userSub: event.userSub }
  const revoked = yield* store.revokeHolder(holder, event.occurredAt, yield* DateTime.now)
  yield* cached.evict(holder)
  if (revoked.length > 0) yield* Effect.logInfo("tokens of a removed member revoked", { eventId: event.id, tenantId: event.tenantId, count: revoked.length })
  return revoked
})
