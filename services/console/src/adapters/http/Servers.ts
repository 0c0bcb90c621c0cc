import { HttpApi, HttpApiBuilder } from "effect/http-api"
import { ConsoleAdminApi } from "@portfolio/domain"
import { serveApi } from "@portfolio/platform/http"
import { OperatorAuthenticationLive } from "@portfolio/platform/security"
import { type Effect, Layer } from "effect"
import { AdminHandlersLive } from "./AdminHandlers.js"
import { ConsolePagesLive, consoleRoute } from "./ConsolePages.js"

/** No JSON API on the pages' port: the console is pages (ConsolePages.ts) and probes. */
class ConsoleApi extends HttpApi.make("console") {}

const PublicHttpLive = Layer.merge(HttpApiBuilder.layer(ConsoleApi), ConsolePagesLive)

export const AdminHttpLive = HttpApiBuilder.layer(ConsoleAdminApi).pipe(
  Layer.provide(AdminHandlersLive.pipe(Layer.provide(OperatorAuthenticationLive)))
)

export const servers = <E, R>(ready: Effect.Effect<unknown, E, R>) => [
  serveApi({ api: ConsoleApi, apiLayer: PublicHttpLive, ready, service: "console", server: "api", routeOutsideApi: consoleRoute }),
  serveApi({ api: ConsoleAdminApi, apiLayer: AdminHttpLive, ready, service: "console", server: "admin" })
] as const
