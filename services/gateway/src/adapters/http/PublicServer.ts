import { HttpServer } from "@effect/platform"
import { listenOn, probes } from "@portfolio/platform"
import { Effect, Layer } from "effect"
import { makePublicApp } from "./PublicApp.js"

/** The public proxy on PORT, with the probes beside it. */
export const publicServer = <E, R>(ready: Effect.Effect<unknown, E, R>) =>
  Layer.unwrapScoped(Effect.map(makePublicApp, (app) => HttpServer.serve(app, probes(ready)))).pipe(
    Layer.provide(listenOn("PORT", 8080))
  )
