import { PatCache } from "@portfolio/domain/ports/gateway/PatCache"
import { PatStore } from "@portfolio/domain/ports/gateway/PatStore"
import type { MemberRemoved } from "@portfolio/domain/ports/provisioning"
import { DateTime, Effect } from "effect"

/**
 * A member removed from a tenant loses the tokens they held there at once (decisions.md). Only
 * tokens issued before the removal are touched, so redelivered or replayed events are harmless.
 */
export const revokeHolderPats = Effect.fn("gateway.revokeHolderPats")(function*(event: MemberRemoved) {
  const store = yield* PatStore
  const cache = yield* PatCache
  const revoked = yield* store.revokeHolder({ tenantId: event.tenantId, userSub: event.userSub }, event.occurredAt, yield* DateTime.now)
  yield* Effect.forEach(revoked, cache.invalidate, { discard: true })
  if (revoked.length > 0) yield* Effect.logInfo("tokens of a removed member revoked", { eventId: event.id, tenantId: event.tenantId, count: revoked.length })
  return revoked
})
