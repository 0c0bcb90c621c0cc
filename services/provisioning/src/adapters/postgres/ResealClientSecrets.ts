import { SqlClient } from "effect/sql"
import { Effect, Layer, Option } from "effect"
import { ClientSecretSealer } from "./SsoConnectionRepositoryPg.js"

/**
 * At start, every single sign-on client secret that only INTERNAL_SECRET_PREVIOUS still opens is
 * sealed again under INTERNAL_SECRET (docs/security.md, "Single sign-on"): once every replica has
 * started with the new secret, unsetting the previous one loses no connection. Replicas doing it
 * together write the same secret under the same key: harmless.
 */
export const ResealClientSecretsLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const sealer = yield* ClientSecretSealer
    const rows = yield* sql<{ tenantId: string; sealedClientSecret: Uint8Array }>`
      SELECT tenant_id, sealed_client_secret FROM provisioning.sso_connections`
    let resealed = 0
    for (const row of rows) {
      const again = yield* sealer.reseal(row.tenantId, row.sealedClientSecret)
      if (Option.isNone(again)) continue
      yield* sql`UPDATE provisioning.sso_connections SET sealed_client_secret = ${again.value} WHERE tenant_id = ${row.tenantId}`
      resealed++
    }
    if (resealed > 0) yield* Effect.logInfo("single sign-on client secrets sealed again under the current INTERNAL_SECRET", { resealed })
  }).pipe(Effect.orDie)
)
