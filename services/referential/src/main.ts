import { SqlClient } from "@effect/sql"
import { ErrorsUrl, InternalSecret, PgLive, runService, serveApi } from "@portfolio/platform"
import { Config, Effect, Layer } from "effect"
import { AdminApiLive } from "./http/AdminHandlers.js"
import { EncodedReadCache } from "./http/EncodedReadCache.js"
import { PublicApiLive } from "./http/PublicHandlers.js"
import { ReferentialMigrationsLive } from "./postgres/Migrations.js"
import { ReferentialPg } from "./postgres/ReferentialPg.js"

const ready = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT 1`)

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

const PublicServer = serveApi({ apiLayer: PublicApiLive, ready, portVariable: "PORT", defaultPort: 8082 })
const AdminServer = serveApi({ apiLayer: AdminApiLive, ready, portVariable: "ADMIN_PORT", defaultPort: 8083 })

runService("referential", InfraLive, [PublicServer, AdminServer])
