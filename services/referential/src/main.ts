import { ErrorsUrl, runService } from "@portfolio/platform/http"
import { EventPublisherJs, NatsSettings, OutboxRelayLive } from "@portfolio/platform/nats"
import { InternalSecret } from "@portfolio/platform/security"
import { databaseReady, PgLive } from "@portfolio/platform/sql"
import { Layer } from "effect"
import { EncodedReadCache } from "./adapters/http/EncodedReadCache.js"
import { servers } from "./adapters/http/Servers.js"
import { MigrationsLive } from "./adapters/postgres/Migrations.js"
import { PruningLive } from "./adapters/postgres/Pruning.js"
import { PgAdaptersLive } from "./adapters/postgres/PgAdapters.js"
import { ReferentialSettings } from "./Config.js"
import { ReadFreshness } from "./usecases/ReadFreshness.js"

/**
 * Shared by both ports: one pool, the migrated schema, the adapters, the secret, the caches, and
 * the relay of the outbox (which connects to NATS on its own, so the referential serves while NATS
 * is away).
 */
const InfraLive = Layer.mergeAll(
  OutboxRelayLive("referential", EventPublisherJs("referential").pipe(Layer.provide(NatsSettings.layer))),
  EncodedReadCache.layer.pipe(Layer.provide(ReferentialSettings.layer)),
  // One for both servers: the admin API's writes tell the public API's readers.
  ReadFreshness.layer,
  InternalSecret.layer,
  ErrorsUrl.layer
).pipe(
  Layer.provideMerge(PgAdaptersLive),
  Layer.provideMerge(MigrationsLive),
  Layer.provideMerge(PgLive)
)

runService("referential", InfraLive, [...servers(databaseReady), PruningLive])
