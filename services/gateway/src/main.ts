import { databaseReady, ErrorsUrl, InternalSecret, NatsConfig, PgLive, runService, securityLogPg, UnitOfWorkPg } from "@portfolio/platform"
import { FetchHttpClient } from "@effect/platform"
import { Effect, Layer } from "effect"
import { adminServer } from "./adapters/http/AdminServer.js"
import { MembershipsHttp } from "./adapters/http/MembershipsHttp.js"
import { publicServer } from "./adapters/http/PublicServer.js"
import { UpstreamForwarderLive } from "./adapters/http/UpstreamForwarder.js"
import { PartnerTokensJoseLive } from "./adapters/jose/PartnerTokensJose.js"
import { MemberRemovedListenerLive } from "./adapters/nats/MemberRemovedConsumer.js"
import { RateLimitStoreKvLive } from "./adapters/nats/rate-limit/RateLimitStoreKv.js"
import { RateLimitHealth } from "./ports/rate-limit/RateLimitHealth.js"
import { PatCacheMemoryLive } from "./adapters/memory/PatCacheMemory.js"
import { RateLimitStoreMemoryLive } from "./adapters/memory/rate-limit/RateLimitStoreMemory.js"
import { RecentlyValidTokensMemoryLive } from "./adapters/memory/RecentlyValidTokensMemory.js"
import { SpentAddressesMemoryLive } from "./adapters/memory/rate-limit/SpentAddressesMemory.js"
import { GatewayMigrationsLive } from "./adapters/postgres/Migrations.js"
import { PatRequestStorePostgresLive } from "./adapters/postgres/PatRequestStorePostgres.js"
import { PartnerClientStorePostgresLive } from "./adapters/postgres/PartnerClientStorePostgres.js"
import { PatStorePostgresLive } from "./adapters/postgres/PatStorePostgres.js"
import { GatewayConfig, rateLimitStoreKind } from "./Config.js"

/** The rate-limit store that `RATE_LIMIT_STORE` names, with its health. */
const RateLimitStoreLive = Layer.unwrapEffect(
  Effect.map(rateLimitStoreKind, (kind) => (kind === "memory" ? Layer.merge(RateLimitStoreMemoryLive, RateLimitHealth.inProcess) : RateLimitStoreKvLive))
)

const infra = Layer.mergeAll(
  PatStorePostgresLive,
  PatRequestStorePostgresLive,
  UnitOfWorkPg,
  PartnerClientStorePostgresLive,
  securityLogPg("gateway"),
  PartnerTokensJoseLive,
  PatCacheMemoryLive,
  RateLimitStoreLive,
  SpentAddressesMemoryLive,
  RecentlyValidTokensMemoryLive,
  UpstreamForwarderLive,
  MembershipsHttp.pipe(Layer.provide(Layer.merge(FetchHttpClient.layer, InternalSecret.layer))),
  GatewayMigrationsLive,
  InternalSecret.layer,
  ErrorsUrl.layer
).pipe(Layer.provideMerge(GatewayConfig.layer), Layer.provideMerge(NatsConfig.layer), Layer.provideMerge(PgLive))

runService("gateway", infra, [publicServer, adminServer(databaseReady), MemberRemovedListenerLive])
