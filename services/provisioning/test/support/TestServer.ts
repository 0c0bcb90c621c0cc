import { HttpApiBuilder, type HttpApi } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { ErrorsUrl, ProblemMiddlewareLive, probes } from "@portfolio/platform/http"
import { InternalSecret } from "@portfolio/platform/security"
import { Effect, Layer } from "effect"

/** The secret the test servers verify assertions with; tests sign theirs with it. */
export const testSecret = "test-internal-secret-of-at-least-32-characters"

/**
 * One of the service's HTTP ports as main.ts serves it (problem+json, probes), on an ephemeral port
 * that the test's HttpClient reaches, over the given ports (in memory or PostgreSQL).
 */
export const testServer = <E1, R1, AP, E2, R2>(api: Layer.Layer<HttpApi.Api, E1, R1>, ports: Layer.Layer<AP, E2, R2>) =>
  HttpApiBuilder.serve(probes(Effect.void)).pipe(
    Layer.provide(ProblemMiddlewareLive),
    Layer.provide(api),
    Layer.provideMerge(NodeHttpServer.layerTest),
    Layer.provide(InternalSecret.fixed(testSecret)),
    Layer.provideMerge(Layer.succeed(ErrorsUrl, "https://errors.test/api")),
    Layer.provideMerge(ports)
  )
