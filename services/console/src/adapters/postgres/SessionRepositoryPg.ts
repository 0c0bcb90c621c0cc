import { SqlClient } from "effect/sql"
import { Effect, Layer, Option } from "effect"
import { SessionRepository } from "../../ports/SessionRepository.js"

interface SessionRow {
  readonly idHash: string
  readonly userSub: string
  readonly email: string
  readonly tenantId: string | null
  readonly ssoTenantId: string | null
  readonly csrfToken: string
  readonly createdAt: Date
  readonly lastSeenAt: Date
  readonly ip: string
  readonly userAgent: string
}

export const SessionRepositoryPg = Layer.effect(
  SessionRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return SessionRepository.of({
      create: (s) =>
        sql`INSERT INTO console.sessions (id_hash, user_sub, email, tenant_id, sso_tenant_id, csrf_token, created_at, last_seen_at, ip, user_agent)
            VALUES (${s.idHash}, ${s.userSub}, ${s.email}, ${s.tenantId}, ${s.ssoTenantId}, ${s.csrfToken}, ${new Date(s.createdAtMs)}, ${new Date(s.lastSeenAtMs)}, ${s.ip}, ${s.userAgent})`
          .pipe(Effect.asVoid, Effect.orDie),
      find: (idHash) =>
        sql<SessionRow>`SELECT id_hash, user_sub, email, tenant_id, sso_tenant_id, csrf_token, created_at, last_seen_at, ip, user_agent
                        FROM console.sessions WHERE id_hash = ${idHash}`.pipe(
          Effect.map((rows) =>
            Option.map(Option.fromNullishOr(rows[0]), (r) => ({
              idHash: r.idHash,
              userSub: r.userSub,
              email: r.email,
              tenantId: r.tenantId,
              ssoTenantId: r.ssoTenantId,
              csrfToken: r.csrfToken,
              createdAtMs: r.createdAt.getTime(),
              lastSeenAtMs: r.lastSeenAt.getTime(),
              ip: r.ip,
              userAgent: r.userAgent
            }))),
          Effect.orDie
        ),
      touch: (idHash, atMs) => sql`UPDATE console.sessions SET last_seen_at = ${new Date(atMs)} WHERE id_hash = ${idHash}`.pipe(Effect.asVoid, Effect.orDie),
      chooseTenant: (idHash, tenantId) =>
        sql`UPDATE console.sessions SET tenant_id = ${tenantId} WHERE id_hash = ${idHash}`.pipe(Effect.asVoid, Effect.orDie),
      remove: (idHash) => sql`DELETE FROM console.sessions WHERE id_hash = ${idHash}`.pipe(Effect.asVoid, Effect.orDie)
    })
  })
)
