import { SqlClient, SqlSchema } from "effect/sql"
import { Member } from "@portfolio/domain"
import { MemberExists, MemberRepository } from "../../ports/MemberRepository.js"
import { DateTime, Effect, Layer, Option, Schema } from "effect"
import { MemberRow } from "./Rows.js"

export const MemberRepositoryPg = Layer.effect(
  MemberRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql`user_sub, email AS user_email, arb_role, source, granted_at`
    const TenantAnd = Schema.Struct({ tenantId: Schema.String, value: Schema.String })

    const byEmail = SqlSchema.findOneOption({
      Request: TenantAnd,
      Result: MemberRow,
      execute: ({ tenantId, value }) =>
        sql`SELECT ${columns} FROM provisioning.members
            WHERE tenant_id = ${tenantId} AND lower(email) = lower(${value}) AND removed_at IS NULL`
    })
    const bySub = SqlSchema.findOneOption({
      Request: TenantAnd,
      Result: MemberRow,
      execute: ({ tenantId, value }) =>
        sql`SELECT ${columns} FROM provisioning.members
            WHERE tenant_id = ${tenantId} AND user_sub = ${value} AND removed_at IS NULL`
    })
    const active = SqlSchema.findAll({
      Request: Schema.String,
      Result: MemberRow,
      execute: (tenantId) =>
        sql`SELECT ${columns} FROM provisioning.members
            WHERE tenant_id = ${tenantId} AND removed_at IS NULL
            ORDER BY granted_at DESC, id DESC`
    })
    // The cursor names the last member by grant time and userSub; the row id that breaks ties of
    // time stays internal and is read from that membership's row, kept even once removed.
    // `members_active_newest` (migration 0005) serves the order and the row comparison.
    const activeAfter = SqlSchema.findAll({
      Request: Schema.Struct({
        tenantId: Schema.String,
        after: Schema.NullOr(Schema.Struct({ grantedAt: Schema.DateTimeUtcFromDate, userSub: Schema.String })),
        limit: Schema.Int
      }),
      Result: MemberRow,
      execute: ({ after, limit, tenantId }) =>
        sql`SELECT ${columns} FROM provisioning.members m
            WHERE m.tenant_id = ${tenantId} AND m.removed_at IS NULL
              ${after === null ? sql`` : sql`AND (m.granted_at, m.id) < (${after.grantedAt}, (
                SELECT max(p.id) FROM provisioning.members p
                WHERE p.tenant_id = ${tenantId} AND p.user_sub = ${after.userSub} AND p.granted_at = ${after.grantedAt}
              ))`}
            ORDER BY m.granted_at DESC, m.id DESC
            LIMIT ${limit}`
    })
    // `members_active_by_sub` (migration 0007): the console reads a person's memberships on each page.
    const activeOfSub = SqlSchema.findAll({
      Request: Schema.String,
      Result: Schema.Struct({ tenantId: Schema.String, ...MemberRow.fields }),
      execute: (userSub) =>
        sql`SELECT tenant_id, ${columns} FROM provisioning.members
            WHERE user_sub = ${userSub} AND removed_at IS NULL
            ORDER BY id`
    })
    const removedExists = SqlSchema.findOne({
      Request: TenantAnd,
      Result: Schema.Struct({ removed: Schema.Boolean }),
      execute: ({ tenantId, value }) =>
        sql`SELECT EXISTS (SELECT 1 FROM provisioning.members
            WHERE tenant_id = ${tenantId} AND user_sub = ${value} AND removed_at IS NOT NULL) AS removed`
    })
    // FOR UPDATE waits for a concurrent removal to commit, then re-checks `removed_at` on the new
    // row version, so the second of two simultaneous removals sees the first one's outcome.
    const activeAdmins = SqlSchema.findAll({
      Request: Schema.String,
      Result: Schema.Struct({ userSub: Schema.String }),
      execute: (tenantId) =>
        sql`SELECT user_sub FROM provisioning.members
            WHERE tenant_id = ${tenantId} AND arb_role = 'tenant-admin' AND removed_at IS NULL
            ORDER BY id FOR UPDATE`
    })
    const removal = SqlSchema.findOneOption({
      Request: Schema.Struct({ tenantId: Schema.String, userSub: Schema.String, at: Schema.DateTimeUtcFromDate }),
      Result: Schema.Struct({ id: Schema.Number }),
      execute: ({ at, tenantId, userSub }) =>
        sql`UPDATE provisioning.members SET removed_at = ${at}
            WHERE tenant_id = ${tenantId} AND user_sub = ${userSub} AND removed_at IS NULL
            RETURNING id`
    })
    const roleChange = SqlSchema.findOneOption({
      Request: Schema.Struct({ tenantId: Schema.String, userSub: Schema.String, role: Schema.String }),
      Result: Schema.Struct({ id: Schema.Number }),
      execute: ({ role, tenantId, userSub }) =>
        sql`UPDATE provisioning.members SET arb_role = ${role}
            WHERE tenant_id = ${tenantId} AND user_sub = ${userSub} AND removed_at IS NULL
            RETURNING id`
    })
    const toMember = Option.map((row: typeof MemberRow.Type) => new Member(row))

    return MemberRepository.of({
      // ON CONFLICT DO NOTHING (either unique index of the active members) rather than a unique
      // violation: inside an enclosing transaction (SCIM's, single sign-on's) a violation would abort
      // it, and the caller's next read, which settles the race, would fail with it.
      insert: ({ member, tenantId }) =>
        sql`INSERT INTO provisioning.members (tenant_id, user_sub, email, arb_role, source, granted_at)
            VALUES (${tenantId}, ${member.userSub}, ${member.userEmail}, ${member.arbRole}, ${member.source}, ${DateTime.toDate(member.grantedAt)})
            ON CONFLICT DO NOTHING
            RETURNING id`.pipe(
          Effect.orDie,
          Effect.flatMap((rows) => (rows.length > 0 ? Effect.void : Effect.fail(new MemberExists())))
        ),
      findActiveByEmail: (tenantId, email) => byEmail({ tenantId, value: email }).pipe(Effect.map(toMember), Effect.orDie),
      findActiveBySub: (tenantId, userSub) => bySub({ tenantId, value: userSub }).pipe(Effect.map(toMember), Effect.orDie),
      hasRemovedMembership: (tenantId, userSub) =>
        removedExists({ tenantId, value: userSub }).pipe(Effect.map((row) => row.removed), Effect.orDie),
      listActive: (tenantId, page) =>
        (page === undefined ? active(tenantId) : activeAfter({ tenantId, after: Option.getOrNull(page.after), limit: page.limit })).pipe(
          Effect.map((rows) => rows.map((row) => new Member(row))),
          Effect.orDie
        ),
      listActiveByUserSub: (userSub) =>
        activeOfSub(userSub).pipe(
          Effect.map((rows) => rows.map(({ tenantId, ...member }) => ({ tenantId, member: new Member(member) }))),
          Effect.orDie
        ),
      lockActiveAdmins: (tenantId) => activeAdmins(tenantId).pipe(Effect.map((rows) => rows.map((row) => row.userSub)), Effect.orDie),
      changeRole: (tenantId, userSub, role) => roleChange({ tenantId, userSub, role }).pipe(Effect.map(Option.isSome), Effect.orDie),
      remove: (tenantId, userSub, at) => removal({ tenantId, userSub, at }).pipe(Effect.map(Option.isSome), Effect.orDie)
    })
  })
)
