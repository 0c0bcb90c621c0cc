import { FetchHttpClient } from "@effect/platform"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { ErrorsUrl } from "@portfolio/platform/http/ProblemResponse"
import { ConfigProvider, Effect, Exit, Layer } from "effect"
import { AdminClients } from "./AdminClients.js"
import { runCli } from "./Commands.js"
import { reportFailure } from "./Failure.js"
import { OperatorConfig, withLocalEnvFallback } from "./OperatorConfig.js"
import { Stdin } from "./Stdin.js"

const clients = AdminClients.Default.pipe(Layer.provide(OperatorConfig.layer), Layer.provide(FetchHttpClient.layer))

const main = Effect.gen(function*() {
  const provider = yield* withLocalEnvFallback(ConfigProvider.fromEnv())
  return yield* runCli(process.argv, clients).pipe(Effect.provide(ErrorsUrl.layer), Effect.withConfigProvider(provider))
}).pipe(
  Effect.catchAllCause(reportFailure),
  Effect.provide(Layer.mergeAll(NodeContext.layer, Stdin.node, ErrorsUrl.layer))
)

NodeRuntime.runMain(main, {
  disablePrettyLogger: true,
  teardown: (exit, onExit) => onExit(Exit.isSuccess(exit) && typeof exit.value === "number" ? exit.value : 1)
})
