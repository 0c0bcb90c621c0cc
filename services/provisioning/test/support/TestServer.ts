import { HttpRouter } from "effect/http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { answerProblems, ErrorsUrl, ProblemMiddlewareLive, probes } from "@portfolio/platform/http"
import { InternalSecret } from "@portfolio/platform/security"
import { Effect, Layer } from "effect"

/** The secret the test servers verify assertions with; tests sign theirs with it. */
export const testSecret = "test-internal-secret-of-at-least-32-characters"

/** Around the whole router, as serveApi puts them: the probes, and every failure answered as problem+json. */
const PlatformAnswers = HttpRouter.middleware((app) => probes(Effect.void)(answerProblems(app)), { global: true })

/**
 * One of the service's HTTP ports as main.ts serves it (problem+json, probes), on an ephemeral port
 * that the test's HttpClient reaches, over the given ports (in memory or PostgreSQL).
 */
export const testServer = <E1, R1, AP, E2, R2>(api: Layer.Layer<never, E1, R1>, ports: Layer.Layer<AP, E2, R2>) =>
  HttpRouter.serve(Layer.mergeAll(Layer.provide(api, ProblemMiddlewareLive), PlatformAnswers), { disableLogger: true, disableListenLog: true }).pipe(
    Layer.provideMerge(NodeHttpServer.layerTest),
    Layer.provide(InternalSecret.fixed(testSecret)),
    Layer.provideMerge(Layer.succeed(ErrorsUrl, "https://errors.test/api")),
    Layer.provideMerge(ports)
  )
