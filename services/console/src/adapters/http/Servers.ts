import { HttpApi, HttpApiBuilder } from "@effect/platform"
import { serveApi } from "@portfolio/platform"
import { type Effect, Layer } from "effect"
import { ConsolePagesLive, consoleRoute } from "./ConsolePages.js"

/** No JSON API of its own: the console is pages (Routes.ts) and probes. */
class ConsoleApi extends HttpApi.make("console") {}
class ConsoleAdminApi extends HttpApi.make("consoleAdmin") {}

const PagesLive = Layer.merge(HttpApiBuilder.api(ConsoleApi), ConsolePagesLive)

export const servers = <E, R>(ready: Effect.Effect<unknown, E, R>) => [
  serveApi({ apiLayer: PagesLive, ready, service: "console", server: "api", routeOutsideApi: consoleRoute }),
  serveApi({ apiLayer: HttpApiBuilder.api(ConsoleAdminApi), ready, service: "console", server: "admin" })
] as const
