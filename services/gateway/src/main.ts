import { ErrorsUrl, runService } from "@portfolio/platform/http"
import { NatsSettings } from "@portfolio/platform/nats"
import { InternalSecret, SecurityLogPg } from "@portfolio/platform/security"
import { databaseReady, PgLive, UnitOfWorkPg } from "@portfolio/platform/sql"
import { FetchHttpClient } from "effect/http"
import { Effect, Layer } from "effect"
import { MembershipDeskHttp } from "./adapters/http/MembershipDeskHttp.js"
import { servers } from "./adapters/http/Servers.js"
import { UpstreamForwarderHttp } from "./adapters/http/UpstreamForwarderHttp.js"
import { PartnerTokensJose } from "./adapters/jose/PartnerTokensJose.js"
import { MemberRemovedConsumerLive } from "./adapters/nats/MemberRemovedConsumer.js"
import { RateLimitStoreKv } from "./adapters/nats/rate-limit/RateLimitStoreKv.js"
import { PatCacheMemory } from "./adapters/memory/PatCacheMemory.js"
import { ScimTokenCacheMemory } from "./adapters/memory/ScimTokenCacheMemory.js"
import { RateLimitHealthMemory } from "./adapters/memory/rate-limit/RateLimitHealthMemory.js"
import { RateLimitStoreMemory } from "./adapters/memory/rate-limit/RateLimitStoreMemory.js"
import { RecentlyValidTokensMemory } from "./adapters/memory/RecentlyValidTokensMemory.js"
import { SpentAddressesMemory } from "./adapters/memory/rate-limit/SpentAddressesMemory.js"
import { MigrationsLive } from "./adapters/postgres/Migrations.js"
import { PatRequestRepositoryPg } from "./adapters/postgres/PatRequestRepositoryPg.js"
import { PartnerClientRepositoryPg } from "./adapters/postgres/PartnerClientRepositoryPg.js"
import { PatRepositoryPg } from "./adapters/postgres/PatRepositoryPg.js"
import { ScimTokenRepositoryPg } from "./adapters/postgres/ScimTokenRepositoryPg.js"
import { PruningLive } from "./adapters/postgres/Pruning.js"
import { GatewaySettings, rateLimitStoreKind } from "./Config.js"

/** The rate-limit store that `RATE_LIMIT_STORE` names, with its health. */
const RateLimitStoreLive = Layer.unwrap(
  Effect.map(rateLimitStoreKind, (kind) => (kind === "memory" ? Layer.merge(RateLimitStoreMemory, RateLimitHealthMemory) : RateLimitStoreKv))
)

const infra = Layer.mergeAll(
  PatRepositoryPg,
  PatRequestRepositoryPg,
  UnitOfWorkPg,
  PartnerClientRepositoryPg,
  ScimTokenRepositoryPg,
  SecurityLogPg("gateway"),
  PartnerTokensJose,
  PatCacheMemory,
  ScimTokenCacheMemory,
  RateLimitStoreLive,
  SpentAddressesMemory,
  RecentlyValidTokensMemory,
  UpstreamForwarderHttp,
  MembershipDeskHttp.pipe(Layer.provide(Layer.merge(FetchHttpClient.layer, InternalSecret.layer))),
  MigrationsLive,
  InternalSecret.layer,
  ErrorsUrl.layer
).pipe(Layer.provideMerge(GatewaySettings.layer), Layer.provideMerge(NatsSettings.layer), Layer.provideMerge(PgLive))

runService("gateway", infra, [...servers(databaseReady), MemberRemovedConsumerLive, PruningLive])
