import { SqlClient } from "effect/sql"
import { createOutboxTable, indexPublishedOutbox } from "@portfolio/platform/nats"
import { SchemaMigrationsLive } from "@portfolio/platform/sql"
import { Effect } from "effect"
import { RefusedAddress } from "../../domain/AttemptErrors.js"

export const Schema = "webhook_dispatcher"

const createTables = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Secrets are sealed (AES-GCM under a key derived from INTERNAL_SECRET): a dump alone cannot sign.
  yield* sql`
    CREATE TABLE webhook_dispatcher.subscriptions (
      id uuid PRIMARY KEY,
      tenant_id uuid NOT NULL,
      url text NOT NULL,
      description text NOT NULL,
      kinds jsonb,
      state text NOT NULL CHECK (state IN ('enabled', 'disabled')),
      disabled_reason text CHECK (disabled_reason IN ('manual', 'consecutive_failures')),
      consecutive_failures integer NOT NULL DEFAULT 0,
      sealed_secret bytea NOT NULL,
      sealed_previous_secret bytea,
      previous_secret_expires_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CHECK ((state = 'disabled') = (disabled_reason IS NOT NULL))
    )`
  yield* sql`CREATE INDEX subscriptions_tenant ON webhook_dispatcher.subscriptions (tenant_id, created_at)`
  // The event's body exactly as received: every attempt signs and sends these bytes.
  yield* sql`
    CREATE TABLE webhook_dispatcher.events (
      id uuid PRIMARY KEY,
      tenant_id uuid NOT NULL,
      type text NOT NULL,
      body text NOT NULL,
      traceparent text,
      created_at timestamptz NOT NULL,
      received_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE webhook_dispatcher.deliveries (
      id uuid PRIMARY KEY,
      event_id uuid NOT NULL REFERENCES webhook_dispatcher.events (id),
      subscription_id uuid NOT NULL REFERENCES webhook_dispatcher.subscriptions (id) ON DELETE CASCADE,
      status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
      failure_reason text CHECK (failure_reason IN ('attempts_exhausted', 'subscription_disabled')),
      attempts integer NOT NULL DEFAULT 0,
      round_attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz,
      lease_until timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (event_id, subscription_id),
      CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL)),
      CHECK ((status = 'failed') = (failure_reason IS NOT NULL))
    )`
  yield* sql`CREATE INDEX deliveries_due ON webhook_dispatcher.deliveries (next_attempt_at) WHERE status = 'pending'`
  yield* sql`CREATE INDEX deliveries_subscription ON webhook_dispatcher.deliveries (subscription_id, created_at DESC)`
  yield* sql`
    CREATE TABLE webhook_dispatcher.attempts (
      id uuid PRIMARY KEY,
      delivery_id uuid NOT NULL REFERENCES webhook_dispatcher.deliveries (id) ON DELETE CASCADE,
      attempt integer NOT NULL,
      started_at timestamptz NOT NULL,
      duration_ms integer NOT NULL,
      status_code integer,
      error text,
      response_body text NOT NULL,
      UNIQUE (delivery_id, attempt)
    )`
  yield* createOutboxTable(Schema)
})

/**
 * The errors recorded before an attempt's error held only the tenant's words (domain/AttemptErrors.ts):
 * a refused address and node's messages (`error: connect ... 10.1.2.3:443`) named internal
 * addresses; they now read as they would be recorded today. Codes (`error: EPROTO`) stay.
 */
export const attemptErrorsWithoutAddresses = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql`
    UPDATE webhook_dispatcher.attempts SET error = CASE
        WHEN error LIKE 'refused target: %' THEN 'refused: ' || substr(error, 17)
        WHEN error LIKE 'refused target %' THEN ${RefusedAddress}
        ELSE 'request failed'
      END
    WHERE error LIKE 'refused target%' OR (error LIKE 'error: %' AND error !~ '^error: [A-Z][A-Z0-9_]{1,63}$')`)

/**
 * What retention's batches read (adapters/postgres/Pruning.ts): the finished deliveries by their
 * last change, the events by their arrival, the published outbox rows. A plain CREATE INDEX, as
 * every migration here (the migrator runs each in a transaction, where CONCURRENTLY cannot): it
 * holds off writes to each table while it is built, once, in the migrations job.
 */
const retentionIndexes = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX deliveries_finished ON webhook_dispatcher.deliveries (updated_at) WHERE status <> 'pending'`
  yield* sql`CREATE INDEX events_received ON webhook_dispatcher.events (received_at)`
  yield* indexPublishedOutbox(Schema)
})

export const MigrationsLive = SchemaMigrationsLive(Schema, {
  "0001_create_subscriptions_deliveries": createTables,
  "0002_attempt_errors_without_addresses": attemptErrorsWithoutAddresses,
  "0003_retention_indexes": retentionIndexes
})
