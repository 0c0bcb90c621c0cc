import { SqlClient } from "@effect/sql"
import { migrationsLayer } from "@portfolio/platform"
import { Effect } from "effect"

/** The gateway's own schema; PATs are only ever stored as SHA-256 hashes. */
export const GatewayMigrationsLive = migrationsLayer("gateway", {
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
    `)
})
