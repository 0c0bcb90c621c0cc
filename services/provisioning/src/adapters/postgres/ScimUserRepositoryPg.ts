import { SqlClient, SqlSchema } from "effect/sql"
import { ArbRole, Uuid } from "@portfolio/domain"
import { isUniqueViolation } from "@portfolio/platform/sql"
import { DateTime, Effect, Layer, Option, Schema } from "effect"
import { comparesCaseInsensitively, type ScimFilterCondition } from "../../domain/ScimFilter.js"
import { type ScimUserRecord, ScimUserRepository, ScimUserTaken, type ScimUserView } from "../../ports/ScimUserRepository.js"

const ScimUserRow = Schema.Struct({
  id: Schema.String,
  tenantId: Schema.String,
  userName: Schema.String,
  externalId: Schema.NullOr(Schema.String),
  email: Schema.String,
  givenName: Schema.NullOr(Schema.String),
  familyName: Schema.NullOr(Schema.String),
  formattedName: Schema.NullOr(Schema.String),
  displayName: Schema.NullOr(Schema.String),
  arbRole: ArbRole,
  userSub: Schema.NullOr(Schema.String),
  invitationId: Schema.NullOr(Schema.String),
  version: Schema.Number,
  createdAt: Schema.DateTimeUtcFromDate,
  updatedAt: Schema.DateTimeUtcFromDate,
  active: Schema.Boolean
})

const isUuid = Schema.is(Uuid)

/** Which uniqueness a refused write broke; one member's second User is the e-mail's, the member's address. */
const takenOf = (error: unknown) =>
  isUniqueViolation(error, "scim_users_user_name")
    ? Option.some(new ScimUserTaken({ attribute: "userName" }))
    : isUniqueViolation(error, "scim_users_email") || isUniqueViolation(error, "scim_users_user_sub")
    ? Option.some(new ScimUserTaken({ attribute: "email" }))
    : Option.none()

export const ScimUserRepositoryPg = Layer.effect(
  ScimUserRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // The linked member while active (`members_active_sub`, one probe per User): `active`, and the
    // role, which is the member's whichever door changed it (single sign-on's claims, the public API).
    const columns = sql`u.id, u.tenant_id, u.user_name, u.external_id, u.email, u.given_name, u.family_name, u.formatted_name,
      u.display_name, COALESCE(m.arb_role, u.arb_role) AS arb_role, u.user_sub, u.invitation_id, u.version, u.created_at, u.updated_at,
      m.user_sub IS NOT NULL AS active`
    const users = sql`provisioning.scim_users u
      LEFT JOIN provisioning.members m ON m.tenant_id = u.tenant_id AND m.user_sub = u.user_sub AND m.removed_at IS NULL`

    const conditionOf = ({ attribute, value }: ScimFilterCondition) => {
      if (attribute === "id") {
        // The key is a uuid column: a value that is no UUID names no User, and is not sent to be cast.
        return isUuid(value) ? sql`u.id = ${value}` : sql`FALSE`
      }
      const column = { userName: sql`u.user_name`, "emails.value": sql`u.email`, externalId: sql`u.external_id` }[attribute]
      // lower() on both sides, as the unique indexes `scim_users_user_name` and `scim_users_email` read them.
      return comparesCaseInsensitively(attribute) ? sql`lower(${column}) = lower(${value})` : sql`${column} = ${value}`
    }
    const whereOf = (tenantId: string, filter: ReadonlyArray<ScimFilterCondition>) =>
      sql.and([sql`u.tenant_id = ${tenantId}`, sql`u.deleted_at IS NULL`, ...filter.map(conditionOf)])

    const one = (lock: boolean) =>
      SqlSchema.findOneOption({
        Request: Schema.Struct({ tenantId: Schema.String, id: Schema.String }),
        Result: ScimUserRow,
        execute: ({ id, tenantId }) =>
          sql`SELECT ${columns} FROM ${users}
              WHERE u.tenant_id = ${tenantId} AND u.id = ${id} AND u.deleted_at IS NULL
              ${lock ? sql`FOR UPDATE OF u` : sql``}`
      })
    const byId = one(false)
    const lockedById = one(true)
    const find = (query: typeof byId) => (tenantId: string, id: string) =>
      isUuid(id) ? query({ tenantId, id }).pipe(Effect.orDie) : Effect.succeed(Option.none<ScimUserView>())

    const rowsOf = Schema.decodeUnknownEffect(Schema.Array(ScimUserRow))
    const totalOf = Schema.decodeUnknownEffect(Schema.Tuple([Schema.Struct({ total: Schema.Number })]))
    const count = (tenantId: string, filter: ReadonlyArray<ScimFilterCondition>) =>
      sql`SELECT count(*)::int AS total FROM provisioning.scim_users u WHERE ${whereOf(tenantId, filter)}`.pipe(
        Effect.flatMap(totalOf),
        Effect.map(([{ total }]) => total)
      )
    // `scim_users_listing` serves the order; SCIM pages by index (startIndex), not by key.
    const page = (tenantId: string, filter: ReadonlyArray<ScimFilterCondition>, offset: number, limit: number) =>
      sql`SELECT ${columns} FROM ${users} WHERE ${whereOf(tenantId, filter)}
          ORDER BY u.created_at, u.id OFFSET ${offset} LIMIT ${limit}`.pipe(Effect.flatMap(rowsOf))

    const link = (tenantId: string, at: Date) =>
      sql`UPDATE provisioning.scim_users u SET user_sub = m.user_sub, arb_role = m.arb_role, version = u.version + 1, updated_at = ${at}
          FROM provisioning.members m
          WHERE u.tenant_id = ${tenantId} AND u.deleted_at IS NULL AND u.user_sub IS NULL
            AND m.tenant_id = u.tenant_id AND m.removed_at IS NULL AND lower(m.email) = lower(u.email)
            AND NOT EXISTS (SELECT 1 FROM provisioning.scim_users o
                            WHERE o.tenant_id = m.tenant_id AND o.user_sub = m.user_sub AND o.deleted_at IS NULL)`
    // ON CONFLICT DO NOTHING: a member whose e-mail or userName another User holds keeps to that one,
    // and two adoptions at once make each User once.
    const adopt = (tenantId: string, at: Date) =>
      sql`INSERT INTO provisioning.scim_users (id, tenant_id, user_name, email, arb_role, user_sub, version, created_at, updated_at)
          SELECT gen_random_uuid(), m.tenant_id, m.email, m.email, m.arb_role, m.user_sub, 1, ${at}, ${at}
          FROM provisioning.members m
          WHERE m.tenant_id = ${tenantId} AND m.removed_at IS NULL
            AND NOT EXISTS (SELECT 1 FROM provisioning.scim_users o
                            WHERE o.tenant_id = m.tenant_id AND o.user_sub = m.user_sub AND o.deleted_at IS NULL)
          ORDER BY m.granted_at, m.id
          ON CONFLICT DO NOTHING`

    const refusedWrite = (error: unknown) =>
      Option.match(takenOf(error), { onNone: () => Effect.die(error), onSome: (taken) => Effect.fail(taken) })

    return ScimUserRepository.of({
      adoptMembers: (tenantId, at) =>
        Effect.gen(function*() {
          yield* link(tenantId, DateTime.toDate(at))
          yield* adopt(tenantId, DateTime.toDate(at))
        }).pipe(sql.withTransaction, Effect.orDie),
      list: (tenantId, filter, { limit, offset }) =>
        Effect.gen(function*() {
          const totalResults = yield* count(tenantId, filter)
          const users = limit === 0 || offset >= totalResults ? [] : yield* page(tenantId, filter, offset, limit)
          return { totalResults, users }
        }).pipe(Effect.orDie),
      findById: find(byId),
      lockById: find(lockedById),
      insert: (record) =>
        sql`INSERT INTO provisioning.scim_users
              (id, tenant_id, user_name, external_id, email, given_name, family_name, formatted_name, display_name,
               arb_role, user_sub, invitation_id, version, created_at, updated_at)
            VALUES (${record.id}, ${record.tenantId}, ${record.userName}, ${record.externalId}, ${record.email}, ${record.givenName},
                    ${record.familyName}, ${record.formattedName}, ${record.displayName}, ${record.arbRole}, ${record.userSub},
                    ${record.invitationId}, ${record.version}, ${DateTime.toDate(record.createdAt)}, ${DateTime.toDate(record.updatedAt)})`.pipe(
          Effect.asVoid,
          Effect.catchTag("SqlError", refusedWrite)
        ),
      update: (record: ScimUserRecord, expectedVersion) =>
        sql`UPDATE provisioning.scim_users
            SET user_name = ${record.userName}, external_id = ${record.externalId}, email = ${record.email},
                given_name = ${record.givenName}, family_name = ${record.familyName}, formatted_name = ${record.formattedName},
                display_name = ${record.displayName}, arb_role = ${record.arbRole}, user_sub = ${record.userSub},
                invitation_id = ${record.invitationId}, version = ${record.version}, updated_at = ${DateTime.toDate(record.updatedAt)}
            WHERE tenant_id = ${record.tenantId} AND id = ${record.id} AND version = ${expectedVersion} AND deleted_at IS NULL
            RETURNING id`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.catchTag("SqlError", refusedWrite)
        ),
      markDeleted: (tenantId, id, at) =>
        (isUuid(id)
          ? sql`UPDATE provisioning.scim_users SET deleted_at = ${DateTime.toDate(at)}
                WHERE tenant_id = ${tenantId} AND id = ${id} AND deleted_at IS NULL
                RETURNING id`.pipe(Effect.map((rows) => rows.length > 0))
          : Effect.succeed(false)).pipe(Effect.orDie),
      // At most one row: one User per member (`scim_users_user_sub`), and the invitation's only when none is the member's.
      // The stored role follows the membership's latest (a removed member's last role), which the reads prefer while it is active.
      memberChanged: (tenantId, userSub, invitationId, at) =>
        sql`UPDATE provisioning.scim_users u
            SET user_sub = ${userSub}, version = u.version + 1, updated_at = ${DateTime.toDate(at)},
                arb_role = COALESCE((SELECT m.arb_role FROM provisioning.members m
                                     WHERE m.tenant_id = u.tenant_id AND m.user_sub = ${userSub}
                                     ORDER BY m.removed_at IS NULL DESC, m.id DESC LIMIT 1), u.arb_role)
            WHERE u.tenant_id = ${tenantId} AND u.deleted_at IS NULL
              AND (u.user_sub = ${userSub}
                   OR (u.invitation_id = ${invitationId}
                       AND NOT EXISTS (SELECT 1 FROM provisioning.scim_users o
                                       WHERE o.tenant_id = u.tenant_id AND o.user_sub = ${userSub} AND o.deleted_at IS NULL)))`.pipe(
          Effect.asVoid,
          Effect.orDie
        )
    })
  })
)
