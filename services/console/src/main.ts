import { FetchHttpClient } from "@effect/platform"
import { databaseReady, ErrorsUrl, InternalSecret, PgLive, runService } from "@portfolio/platform"
import { Layer } from "effect"
import { DirectoryHttp } from "./adapters/admin-apis/DirectoryHttp.js"
import { MemberDeskHttp } from "./adapters/admin-apis/MemberDeskHttp.js"
import { GatewayLogHttp } from "./adapters/admin-apis/GatewayLogHttp.js"
import { PartnerDeskHttp } from "./adapters/admin-apis/PartnerDeskHttp.js"
import { TokenDeskHttp } from "./adapters/admin-apis/TokenDeskHttp.js"
import { WebhookDeskHttp } from "./adapters/admin-apis/WebhookDeskHttp.js"
import { servers } from "./adapters/http/Servers.js"
import { HousekeepingLive } from "./adapters/postgres/Housekeeping.js"
import { ConsoleMigrationsLive } from "./adapters/postgres/Migrations.js"
import { PostgresAdapters } from "./adapters/postgres/PostgresAdapters.js"
import { ConsoleSettings } from "./Config.js"
import { LockoutNotices } from "./usecases/LockoutNotices.js"

const Upstreams = Layer.mergeAll(DirectoryHttp, TokenDeskHttp, WebhookDeskHttp, MemberDeskHttp, PartnerDeskHttp, GatewayLogHttp).pipe(Layer.provide(FetchHttpClient.layer))

const Infra = Layer.mergeAll(HousekeepingLive, Upstreams, ErrorsUrl.layer, LockoutNotices.layer).pipe(
  Layer.provideMerge(PostgresAdapters),
  Layer.provideMerge(Layer.mergeAll(ConsoleSettings.layer, InternalSecret.layer)),
  Layer.provideMerge(ConsoleMigrationsLive),
  Layer.provideMerge(PgLive)
)

runService("console", Infra, servers(databaseReady))
