import { ErrorsUrl, runService, serveApi } from "@portfolio/platform/http"
import { JetStreamPublisher, NatsSettings, OutboxRelay } from "@portfolio/platform/nats"
import { InternalSecret } from "@portfolio/platform/security"
import { databaseReady, PgLive } from "@portfolio/platform/sql"
import { ReferentialAdminApi } from "@portfolio/domain"
import { Layer } from "effect"
import { AdminApiLive } from "./adapters/http/AdminHandlers.js"
import { EncodedReadCache } from "./adapters/http/EncodedReadCache.js"
import { PublicApiLive } from "./adapters/http/PublicHandlers.js"
import { ReferentialPublicApi } from "./adapters/http/ReferentialPublicApi.js"
import { ReferentialMigrationsLive } from "./adapters/postgres/Migrations.js"
import { PruningLive } from "./adapters/postgres/Pruning.js"
import { PostgresAdapters } from "./adapters/postgres/PostgresAdapters.js"
import { ReferentialSettings } from "./Config.js"
import { ReadFreshness } from "./usecases/ReadFreshness.js"

/**
 * Shared by both ports: one pool, the migrated schema, the adapters, the secret, the caches, and
 * the relay of the outbox (which connects to NATS on its own, so the referential serves while NATS
 * is away).
 */
const InfraLive = Layer.mergeAll(
  OutboxRelay("referential", JetStreamPublisher("referential").pipe(Layer.provide(NatsSettings.layer))),
  EncodedReadCache.live.pipe(Layer.provide(ReferentialSettings.layer)),
  // One for both servers: the admin API's writes tell the public API's readers.
  ReadFreshness.layer,
  InternalSecret.layer,
  ErrorsUrl.layer
).pipe(
  Layer.provideMerge(PostgresAdapters),
  Layer.provideMerge(ReferentialMigrationsLive),
  Layer.provideMerge(PgLive)
)

const PublicServer = serveApi({ api: ReferentialPublicApi, apiLayer: PublicApiLive, ready: databaseReady, service: "referential", server: "api" })
const AdminServer = serveApi({ api: ReferentialAdminApi, apiLayer: AdminApiLive, ready: databaseReady, service: "referential", server: "admin" })

runService("referential", InfraLive, [PublicServer, AdminServer, PruningLive])
