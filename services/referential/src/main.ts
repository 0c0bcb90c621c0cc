import { databaseReady, ErrorsUrl, InternalSecret, PgLive, runService, serveApi } from "@portfolio/platform"
import { Config, Effect, Layer } from "effect"
import { AdminApiLive } from "./adapters/http/AdminHandlers.js"
import { EncodedReadCache } from "./adapters/http/EncodedReadCache.js"
import { PublicApiLive } from "./adapters/http/PublicHandlers.js"
import { ReferentialMigrationsLive } from "./adapters/postgres/Migrations.js"
import { ReferentialPg } from "./adapters/postgres/ReferentialPg.js"


const ReadCacheLive = Layer.unwrapEffect(
  Effect.map(
    Config.integer("REFERENTIAL_READ_CACHE_MB").pipe(
      Config.withDefault(256),
      Config.validate({ message: "must be a whole number of megabytes, at least 1", validation: (n) => n >= 1 })
    ),
    (megabytes) => EncodedReadCache.layer(megabytes * 1024 * 1024)
  )
)

/** Shared by both ports: one pool, the migrated schema, the adapters, the secret, the caches. */
const InfraLive = Layer.mergeAll(ReferentialPg, ReadCacheLive, InternalSecret.layer, ErrorsUrl.layer).pipe(
  Layer.provideMerge(ReferentialMigrationsLive),
  Layer.provideMerge(PgLive)
)

const PublicServer = serveApi({ apiLayer: PublicApiLive, ready: databaseReady, service: "referential", server: "api" })
const AdminServer = serveApi({ apiLayer: AdminApiLive, ready: databaseReady, service: "referential", server: "admin" })

runService("referential", InfraLive, [PublicServer, AdminServer])
