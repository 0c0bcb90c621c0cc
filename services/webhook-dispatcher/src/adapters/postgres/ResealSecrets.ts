import { SqlClient } from "effect/sql"
import { Effect, Layer, Option } from "effect"
import { SecretSealer } from "./SealedSecrets.js"

interface SealedRow {
  readonly id: string
  readonly sealedSecret: Uint8Array
  readonly sealedPreviousSecret: Uint8Array | null
}

/**
 * At start, every signing secret that only INTERNAL_SECRET_PREVIOUS still opens is sealed again
 * under INTERNAL_SECRET (docs/security.md#webhooks): once every replica has started with the new
 * secret, unsetting the previous one loses no subscription. Replicas doing it together write the
 * same secret under the same key: harmless.
 */
export const ResealSecretsLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const sealer = yield* SecretSealer
    const rows = yield* sql<SealedRow>`SELECT id, sealed_secret, sealed_previous_secret FROM webhook_dispatcher.subscriptions`
    let resealed = 0
    for (const row of rows) {
      const secret = yield* sealer.reseal(row.id, row.sealedSecret)
      const previous = row.sealedPreviousSecret === null ? Option.none() : yield* sealer.reseal(row.id, row.sealedPreviousSecret)
      if (Option.isNone(secret) && Option.isNone(previous)) continue
      yield* sql`UPDATE webhook_dispatcher.subscriptions SET
                   sealed_secret = ${Option.getOrElse(secret, () => row.sealedSecret)},
                   sealed_previous_secret = ${Option.getOrElse(previous, () => row.sealedPreviousSecret)}
                 WHERE id = ${row.id}`
      resealed++
    }
    if (resealed > 0) yield* Effect.logInfo("signing secrets sealed again under the current INTERNAL_SECRET", { resealed })
  }).pipe(Effect.orDie)
)
