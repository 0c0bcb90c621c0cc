import { SqlClient, SqlSchema } from "effect/sql"
import { DateTime, Effect, Layer, Schema } from "effect"
import { SsoSignInRepository } from "../../ports/SsoSignInRepository.js"

const PendingRow = Schema.Struct({
  stateHash: Schema.String,
  tenantId: Schema.String,
  nonce: Schema.String,
  codeVerifier: Schema.String,
  expiresAt: Schema.DateTimeUtcFromDate
})

export const SsoSignInRepositoryPg = Layer.effect(
  SsoSignInRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // DELETE ... RETURNING: of two callbacks bringing the same state at once, one gets the row.
    const take = SqlSchema.findOneOption({
      Request: Schema.Struct({ stateHash: Schema.String, tenantId: Schema.String, now: Schema.Date }),
      Result: PendingRow,
      execute: ({ now, stateHash, tenantId }) =>
        sql`DELETE FROM provisioning.sso_sign_ins
            WHERE state_hash = ${stateHash} AND tenant_id = ${tenantId} AND expires_at > ${now}
            RETURNING state_hash, tenant_id, nonce, code_verifier, expires_at`
    })
    return SsoSignInRepository.of({
      save: (pending, now) =>
        Effect.gen(function*() {
          yield* sql`DELETE FROM provisioning.sso_sign_ins WHERE expires_at <= ${DateTime.toDate(now)}`
          yield* sql`INSERT INTO provisioning.sso_sign_ins ${sql.insert({
            state_hash: pending.stateHash,
            tenant_id: pending.tenantId,
            nonce: pending.nonce,
            code_verifier: pending.codeVerifier,
            expires_at: DateTime.toDate(pending.expiresAt)
          })}`
        }).pipe(Effect.orDie),
      take: (stateHash, tenantId, now) => take({ stateHash, tenantId, now: DateTime.toDate(now) }).pipe(Effect.orDie)
    })
  })
)
