import { SqlClient } from "effect/sql"
import { createSecurityEventsTable, indexSecurityEventsByTime } from "@portfolio/platform/security"
import { SchemaMigrationsLive } from "@portfolio/platform/sql"
import { Effect } from "effect"

export const Schema = "console"

const createTables = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // The cookie's SHA-256, never the cookie: a dump of this table signs nobody in.
  yield* sql`
    CREATE TABLE console.sessions (
      id_hash text PRIMARY KEY,
      user_sub text NOT NULL,
      email text NOT NULL,
      tenant_id uuid,
      csrf_token text NOT NULL,
      created_at timestamptz NOT NULL,
      last_seen_at timestamptz NOT NULL,
      ip text NOT NULL,
      user_agent text NOT NULL
    )`
  yield* sql`CREATE INDEX sessions_last_seen ON console.sessions (last_seen_at)`
  // One row per attempt while it runs and per failure after: the lockout counts them.
  yield* sql`
    CREATE TABLE console.sign_in_attempts (
      id uuid PRIMARY KEY,
      email_key text NOT NULL,
      ip text NOT NULL,
      at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX sign_in_attempts_email ON console.sign_in_attempts (email_key, at)`
  yield* sql`CREATE INDEX sign_in_attempts_ip ON console.sign_in_attempts (ip, at)`
  yield* createSecurityEventsTable("console", { tenant: "optional" })
})

/**
 * What retention's batches read (adapters/postgres/Pruning.ts): the attempts by time alone (their
 * indexes start with the e-mail or the address) and the security log by time. Plain CREATE INDEX,
 * as the first migration: the migrator runs each in a transaction.
 */
const retentionIndexes = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX sign_in_attempts_at ON console.sign_in_attempts (at)`
  yield* indexSecurityEventsByTime(Schema)
})

/**
 * A session opened through a tenant's identity provider acts in that tenant only
 * (usecases/SignIn.ts, `usableMemberships`); null for a session opened with a password.
 */
const sessionsThroughProvider = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE console.sessions ADD COLUMN sso_tenant_id uuid`
})

export const MigrationsLive = SchemaMigrationsLive(Schema, {
  "0001_sessions_attempts_security_events": createTables,
  "0002_retention_indexes": retentionIndexes,
  "0003_sessions_through_provider": sessionsThroughProvider
})
