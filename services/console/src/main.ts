import { FetchHttpClient } from "effect/http"
import { ErrorsUrl, runService } from "@portfolio/platform/http"
import { InternalSecret } from "@portfolio/platform/security"
import { databaseReady, PgLive } from "@portfolio/platform/sql"
import { Layer } from "effect"
import { DirectoryDeskHttp } from "./adapters/admin-apis/DirectoryDeskHttp.js"
import { MemberDeskHttp } from "./adapters/admin-apis/MemberDeskHttp.js"
import { GatewayLogDeskHttp } from "./adapters/admin-apis/GatewayLogDeskHttp.js"
import { PartnerDeskHttp } from "./adapters/admin-apis/PartnerDeskHttp.js"
import { ScimTokenDeskHttp } from "./adapters/admin-apis/ScimTokenDeskHttp.js"
import { SsoDeskHttp } from "./adapters/admin-apis/SsoDeskHttp.js"
import { TokenDeskHttp } from "./adapters/admin-apis/TokenDeskHttp.js"
import { WebhookDeskHttp } from "./adapters/admin-apis/WebhookDeskHttp.js"
import { servers } from "./adapters/http/Servers.js"
import { MigrationsLive } from "./adapters/postgres/Migrations.js"
import { PgAdaptersLive } from "./adapters/postgres/PgAdapters.js"
import { PruningLive } from "./adapters/postgres/Pruning.js"
import { ConsoleSettings } from "./Config.js"
import { LockoutNotices } from "./usecases/LockoutNotices.js"

const Upstreams = Layer.mergeAll(DirectoryDeskHttp, TokenDeskHttp, WebhookDeskHttp, MemberDeskHttp, PartnerDeskHttp, ScimTokenDeskHttp, SsoDeskHttp, GatewayLogDeskHttp).pipe(Layer.provide(FetchHttpClient.layer))

const Infra = Layer.mergeAll(PruningLive, Upstreams, ErrorsUrl.layer, LockoutNotices.layer).pipe(
  Layer.provideMerge(PgAdaptersLive),
  Layer.provideMerge(Layer.mergeAll(ConsoleSettings.layer, InternalSecret.layer)),
  Layer.provideMerge(MigrationsLive),
  Layer.provideMerge(PgLive)
)

runService("console", Infra, servers(databaseReady))
