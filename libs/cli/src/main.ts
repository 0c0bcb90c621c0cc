import { FetchHttpClient } from "effect/http"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { ErrorsUrl } from "@portfolio/platform/http"
import { ConfigProvider, Effect, Exit, Layer } from "effect"
import { AdminClients } from "./AdminClients.js"
import { runCli } from "./Commands.js"
import { reportFailure } from "./Failure.js"
import { OperatorSettings, withLocalEnvFallback } from "./OperatorSettings.js"
import { Stdin } from "./Stdin.js"

const clients = AdminClients.layer.pipe(Layer.provide(OperatorSettings.layer), Layer.provide(FetchHttpClient.layer))

const main = Effect.gen(function*() {
  const provider = yield* withLocalEnvFallback(ConfigProvider.fromEnv({ preserveEmptyStrings: true }))
  // Read again under `provider` (local.env may set ERRORS_URL), not the outer copy reused.
  return yield* runCli(process.argv, clients).pipe(
    Effect.provide(ErrorsUrl.layer, { local: true }),
    Effect.provideService(ConfigProvider.ConfigProvider, provider)
  )
}).pipe(
  Effect.catchCause(reportFailure),
  Effect.provide(Layer.mergeAll(NodeServices.layer, Stdin.layer, ErrorsUrl.layer))
)

NodeRuntime.runMain(main, {
  teardown: (exit, onExit) => onExit(Exit.isSuccess(exit) && typeof exit.value === "number" ? exit.value : 1)
})
