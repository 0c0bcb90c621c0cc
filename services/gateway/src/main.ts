import { databaseReady, ErrorsUrl, NatsConfig, InternalSecret, migrationsLayer, PgLive, runService } from "@portfolio/platform"
import { Config, Effect, Layer } from "effect"
import { adminServer } from "./adapters/http/AdminServer.js"
import { publicServer } from "./adapters/http/PublicServer.js"
import { UpstreamForwarderLive } from "./adapters/http/UpstreamForwarder.js"
import { MemberRemovedListenerLive } from "./adapters/nats/MemberRemovedConsumer.js"
import { RateLimitStoreKvLive } from "./adapters/nats/RateLimitStoreKv.js"
import { PatCacheMemoryLive } from "./adapters/memory/PatCacheMemory.js"
import { SlidingWindowLogLive } from "./adapters/memory/SlidingWindowLog.js"
import { RecentlyValidTokensMemoryLive } from "./adapters/memory/RecentlyValidTokensMemory.js"
import { SpentAddressesMemoryLive } from "./adapters/memory/SpentAddressesMemory.js"
import { gatewayMigrations, GatewaySchema } from "./adapters/postgres/migrations.js"
import { PatStorePostgresLive } from "./adapters/postgres/PatStorePostgres.js"
import { GatewayConfig } from "./Config.js"

const rateLimitStoreKind = Config.literal("jetstream", "memory")("RATE_LIMIT_STORE").pipe(Config.withDefault("jetstream" as const))

/** `RATE_LIMIT_STORE=memory` counts in this process only: a single local replica, no shared bucket. */
const RateLimitStoreLive = Layer.unwrapEffect(
  Effect.map(rateLimitStoreKind, (kind) => (kind === "memory" ? SlidingWindowLogLive : RateLimitStoreKvLive))
)

const infra = Layer.mergeAll(
  PatStorePostgresLive,
  PatCacheMemoryLive,
  RateLimitStoreLive,
  SpentAddressesMemoryLive,
  RecentlyValidTokensMemoryLive,
  UpstreamForwarderLive,
  migrationsLayer(GatewaySchema, gatewayMigrations),
  InternalSecret.layer,
  ErrorsUrl.layer
).pipe(Layer.provideMerge(GatewayConfig.layer), Layer.provideMerge(NatsConfig.layer), Layer.provideMerge(PgLive))

runService("gateway", infra, [publicServer(databaseReady), adminServer(databaseReady), MemberRemovedListenerLive])
