import { SqlClient, SqlSchema } from "effect/sql"
import { InvitationRepository, PendingInvitationExists } from "../../ports/InvitationRepository.js"
import { DateTime, Effect, Layer, Option, Schema } from "effect"
import { InvitationRow } from "./Rows.js"
import { isUniqueViolation } from "@portfolio/platform/sql"

export const InvitationRepositoryPg = Layer.effect(
  InvitationRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql`id, kind, tenant_id, email, arb_role, invited_by_email, created_at, expires_at, accepted_at, revoked_at`

    const list = SqlSchema.findAll({
      Request: Schema.String,
      Result: InvitationRow,
      execute: (tenantId) =>
        sql`SELECT ${columns} FROM provisioning.invitations WHERE tenant_id = ${tenantId} ORDER BY created_at DESC, id DESC`
    })
    // Keyset on `invitations_tenant_newest` (migration 0005): the page starts right after the cursor's row.
    const listAfter = SqlSchema.findAll({
      Request: Schema.Struct({
        tenantId: Schema.String,
        after: Schema.NullOr(Schema.Struct({ createdAt: Schema.DateTimeUtcFromDate, id: Schema.String })),
        limit: Schema.Int
      }),
      Result: InvitationRow,
      execute: ({ after, limit, tenantId }) =>
        sql`SELECT ${columns} FROM provisioning.invitations
            WHERE tenant_id = ${tenantId} ${after === null ? sql`` : sql`AND (created_at, id) < (${after.createdAt}, ${after.id})`}
            ORDER BY created_at DESC, id DESC
            LIMIT ${limit}`
    })
    const byId = SqlSchema.findOneOption({
      Request: Schema.Struct({ tenantId: Schema.String, id: Schema.String }),
      Result: InvitationRow,
      execute: ({ id, tenantId }) => sql`SELECT ${columns} FROM provisioning.invitations WHERE tenant_id = ${tenantId} AND id = ${id}`
    })
    const byTokenHash = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: InvitationRow,
      execute: (tokenHash) => sql`SELECT ${columns} FROM provisioning.invitations WHERE token_hash = ${tokenHash} FOR UPDATE`
    })
    const recent = SqlSchema.findOne({
      Request: Schema.Struct({ tenantId: Schema.String, since: Schema.DateTimeUtcFromDate }),
      Result: Schema.Struct({ count: Schema.Number, oldest: Schema.OptionFromNullOr(Schema.DateTimeUtcFromDate) }),
      execute: ({ since, tenantId }) =>
        sql`SELECT count(*)::int AS count, min(created_at) AS oldest FROM provisioning.invitations
            WHERE tenant_id = ${tenantId} AND kind = 'invitation' AND created_at > ${since}`
    })
    // On the partial unique index `invitations_one_pending`; a plain SELECT waits on no row lock.
    const pending = SqlSchema.findOne({
      Request: Schema.Struct({ tenantId: Schema.String, email: Schema.String, at: Schema.DateTimeUtcFromDate }),
      Result: Schema.Struct({ pending: Schema.Boolean }),
      execute: ({ at, email, tenantId }) =>
        sql`SELECT EXISTS (SELECT 1 FROM provisioning.invitations
                           WHERE tenant_id = ${tenantId} AND lower(email) = lower(${email})
                             AND accepted_at IS NULL AND revoked_at IS NULL AND superseded_at IS NULL
                             AND expires_at > ${at}) AS pending`
    })

    const wrongPassword = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: Schema.Struct({ wrongPasswords: Schema.Number }),
      execute: (id) =>
        sql`UPDATE provisioning.invitations SET wrong_passwords = wrong_passwords + 1 WHERE id = ${id} RETURNING wrong_passwords`
    })

    // RETURNING tells whether this call closed the invitation or found it already closed.
    const close = (column: "accepted_at" | "revoked_at") => {
      const update = SqlSchema.findOneOption({
        Request: Schema.Struct({ id: Schema.String, at: Schema.DateTimeUtcFromDate }),
        Result: Schema.Struct({ id: Schema.String }),
        execute: ({ at, id }) =>
          sql`UPDATE provisioning.invitations SET ${sql(column)} = ${at}
              WHERE id = ${id} AND accepted_at IS NULL AND revoked_at IS NULL
              RETURNING id`
      })
      return (id: string, at: DateTime.Utc) => update({ id, at }).pipe(Effect.map(Option.isSome), Effect.orDie)
    }

    const roleChange = SqlSchema.findOneOption({
      Request: Schema.Struct({ tenantId: Schema.String, id: Schema.String, role: Schema.String }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ id, role, tenantId }) =>
        sql`UPDATE provisioning.invitations SET arb_role = ${role}
            WHERE tenant_id = ${tenantId} AND id = ${id} AND accepted_at IS NULL AND revoked_at IS NULL
            RETURNING id`
    })

    return InvitationRepository.of({
      insert: (record, tokenHash) =>
        Effect.gen(function*() {
          const createdAt = DateTime.toDate(record.createdAt)
          yield* sql`UPDATE provisioning.invitations SET superseded_at = ${createdAt}
                     WHERE tenant_id = ${record.tenantId} AND lower(email) = lower(${record.email})
                       AND accepted_at IS NULL AND revoked_at IS NULL AND superseded_at IS NULL
                       AND expires_at <= ${createdAt}`
          yield* sql`INSERT INTO provisioning.invitations
                       (id, kind, tenant_id, email, arb_role, invited_by_email, created_at, expires_at, token_hash)
                     VALUES (${record.id}, ${record.kind}, ${record.tenantId}, ${record.email}, ${record.arbRole}, ${record.invitedByEmail},
                             ${createdAt}, ${DateTime.toDate(record.expiresAt)}, ${tokenHash})`
        }).pipe(
          // Both statements run in one transaction, so a racing creator either sees our row or loses on the index.
          sql.withTransaction,
          Effect.catchTag("SqlError", (error) =>
            isUniqueViolation(error, "invitations_one_pending") ? Effect.fail(new PendingInvitationExists()) : Effect.die(error))
        ),
      countCreatedSince: (tenantId, since) =>
        Effect.gen(function*() {
          // Serialises the creations of one tenant for the rest of the enclosing transaction; NO KEY
          // UPDATE leaves the foreign-key checks of other writers (new members) unblocked.
          yield* sql`SELECT id FROM provisioning.tenants WHERE id = ${tenantId} FOR NO KEY UPDATE`
          return yield* recent({ tenantId, since })
        }).pipe(Effect.orDie),
      hasPending: (tenantId, email, at) => pending({ tenantId, email, at }).pipe(Effect.map((row) => row.pending), Effect.orDie),
      list: (tenantId, page) =>
        (page === undefined ? list(tenantId) : listAfter({ tenantId, after: Option.getOrNull(page.after), limit: page.limit })).pipe(Effect.orDie),
      findById: (tenantId, id) => byId({ tenantId, id }).pipe(Effect.orDie),
      findByTokenHash: (tokenHash) => byTokenHash(tokenHash).pipe(Effect.orDie),
      markRevoked: close("revoked_at"),
      markAccepted: close("accepted_at"),
      changeRole: (tenantId, id, role) => roleChange({ tenantId, id, role }).pipe(Effect.map(Option.isSome), Effect.orDie),
      recordWrongPassword: (id) =>
        wrongPassword(id).pipe(Effect.map(Option.match({ onNone: () => 0, onSome: (row) => row.wrongPasswords })), Effect.orDie)
    })
  })
)
