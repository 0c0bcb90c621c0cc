import { SqlClient } from "effect/sql"
import { createSecurityEventsTable, indexSecurityEventsByTime } from "@portfolio/platform/security"
import { SchemaMigrationsLive } from "@portfolio/platform/sql"
import { Effect } from "effect"

/**
 * The gateway's own schema: PATs, SCIM tokens and partner clients (tokens and client secrets only
 * ever stored as SHA-256 hashes), the requests for PATs, and the security log of operators' actions.
 */
export const MigrationsLive = SchemaMigrationsLive("gateway", {
  "0001_create_personal_access_tokens": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
      CREATE TABLE gateway.personal_access_tokens (
        id uuid PRIMARY KEY,
        token_hash bytea NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
        token_prefix text NOT NULL,
        tenant_id uuid NOT NULL,
        user_sub text NOT NULL,
        email text NOT NULL,
        role text NOT NULL,
        scope text NOT NULL CHECK (scope IN ('read', 'write')),
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        revoked_at timestamptz,
        last_used_at timestamptz
      );
      CREATE INDEX personal_access_tokens_holder ON gateway.personal_access_tokens (tenant_id, user_sub);
    `),
  // The decision's columns are all set together or not at all, as the state says
  // (docs/product-rules.md#pat-requests): an approval names its token, a denial its reason.
  "0002_create_pat_requests": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
      CREATE TABLE gateway.pat_requests (
        id uuid PRIMARY KEY,
        tenant_id uuid NOT NULL,
        user_sub text NOT NULL,
        email text NOT NULL,
        role text NOT NULL,
        scope text NOT NULL CHECK (scope IN ('read', 'write')),
        days integer NOT NULL CHECK (days BETWEEN 1 AND 366),
        justification text NOT NULL CHECK (char_length(justification) BETWEEN 20 AND 2000),
        status text NOT NULL CHECK (status IN ('pending', 'approved', 'denied')),
        created_at timestamptz NOT NULL,
        decided_at timestamptz,
        decided_by_sub text,
        decided_by_email text,
        decided_by_role text,
        reason text CHECK (char_length(reason) BETWEEN 1 AND 500),
        pat_id uuid REFERENCES gateway.personal_access_tokens (id) DEFERRABLE INITIALLY DEFERRED,
        CHECK (CASE status
          WHEN 'pending' THEN decided_at IS NULL AND decided_by_sub IS NULL AND decided_by_role IS NULL AND reason IS NULL AND pat_id IS NULL
          WHEN 'approved' THEN decided_at IS NOT NULL AND decided_by_sub IS NOT NULL AND decided_by_role IS NOT NULL AND reason IS NULL AND pat_id IS NOT NULL
          ELSE decided_at IS NOT NULL AND decided_by_sub IS NOT NULL AND decided_by_role IS NOT NULL AND reason IS NOT NULL AND pat_id IS NULL
        END)
      );
      CREATE INDEX pat_requests_tenant ON gateway.pat_requests (tenant_id, created_at DESC, id);
    `),
  "0003_create_partner_clients": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
      CREATE TABLE gateway.partner_clients (
        client_id text PRIMARY KEY,
        tenant_id uuid NOT NULL,
        name text NOT NULL UNIQUE,
        scope text NOT NULL CHECK (scope IN ('read', 'write')),
        secret_hash bytea NOT NULL CHECK (octet_length(secret_hash) = 32),
        previous_secret_hash bytea CHECK (octet_length(previous_secret_hash) = 32),
        previous_secret_expires_at timestamptz,
        disabled_at timestamptz,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        CHECK ((previous_secret_hash IS NULL) = (previous_secret_expires_at IS NULL))
      );
      CREATE INDEX partner_clients_tenant ON gateway.partner_clients (tenant_id, created_at);
    `),
  // What operators do on the admin API (usecases/SecurityLog.ts), in the shape of the console's log,
  // which reads it by tenant, newest first.
  "0004_create_security_events": createSecurityEventsTable("gateway", { tenant: "required" }),
  // A request closed because its requester left the tenant: no one decided it, the reason says why.
  // The partial index finds a removed member's pending requests without reading the tenant's others.
  "0005_pat_requests_closed": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
      ALTER TABLE gateway.pat_requests DROP CONSTRAINT pat_requests_status_check;
      ALTER TABLE gateway.pat_requests ADD CONSTRAINT pat_requests_status_check
        CHECK (status IN ('pending', 'approved', 'denied', 'closed'));
      ALTER TABLE gateway.pat_requests DROP CONSTRAINT pat_requests_check;
      ALTER TABLE gateway.pat_requests ADD CONSTRAINT pat_requests_decision_check CHECK (CASE status
        WHEN 'pending' THEN decided_at IS NULL AND decided_by_sub IS NULL AND decided_by_role IS NULL AND reason IS NULL AND pat_id IS NULL
        WHEN 'approved' THEN decided_at IS NOT NULL AND decided_by_sub IS NOT NULL AND decided_by_role IS NOT NULL AND reason IS NULL AND pat_id IS NOT NULL
        WHEN 'denied' THEN decided_at IS NOT NULL AND decided_by_sub IS NOT NULL AND decided_by_role IS NOT NULL AND reason IS NOT NULL AND pat_id IS NULL
        ELSE decided_at IS NOT NULL AND decided_by_sub IS NULL AND decided_by_email IS NULL AND decided_by_role IS NULL AND reason IS NOT NULL AND pat_id IS NULL
      END);
      CREATE INDEX pat_requests_pending_holder ON gateway.pat_requests (tenant_id, user_sub) WHERE status = 'pending';
    `),
  // A partner's name is unique in its tenant only; the id's random suffix keeps ids unique in the
  // deployment. Existing clients keep their ids; their names were unique everywhere, so in their
  // tenants too.
  "0006_partner_names_per_tenant": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
      ALTER TABLE gateway.partner_clients DROP CONSTRAINT partner_clients_name_key;
      CREATE UNIQUE INDEX partner_clients_tenant_name ON gateway.partner_clients (tenant_id, name);
    `),
  // What retention's batches read (adapters/postgres/Pruning.ts): the log by time, the settled
  // requests by their decision, the pending ones by their filing (their expiry follows from it).
  // Plain CREATE INDEX, as above: the migrator runs each migration in a transaction.
  "0007_retention_indexes": Effect.gen(function*() {
    yield* indexSecurityEventsByTime("gateway")
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE INDEX pat_requests_settled ON gateway.pat_requests (decided_at) WHERE status <> 'pending'`
    yield* sql`CREATE INDEX pat_requests_pending_filed ON gateway.pat_requests (created_at) WHERE status = 'pending'`
  }),
  // A tenant's tokens for its identity tool (docs/scim.md): no expiry, no scope; listed by tenant,
  // active ones first, and counted per tenant under its creation lock.
  "0008_create_scim_tokens": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
      CREATE TABLE gateway.scim_tokens (
        id uuid PRIMARY KEY,
        tenant_id uuid NOT NULL,
        label text NOT NULL CHECK (char_length(label) BETWEEN 1 AND 80),
        token_hash bytea NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
        token_prefix text NOT NULL,
        created_by text NOT NULL,
        created_at timestamptz NOT NULL,
        last_used_at timestamptz,
        revoked_at timestamptz
      );
      CREATE INDEX scim_tokens_tenant ON gateway.scim_tokens (tenant_id, created_at DESC);
    `)
})
