import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { probes } from "../../src/http/Server.js"

/** The probes in front of an app, called without a server: a request in, a response out. */
const probed = (ready: Effect.Effect<unknown, unknown>) => {
  const app = probes(ready)(Effect.succeed(HttpServerResponse.text("the app")))
  return (path: string) =>
    Effect.map(
      Effect.provideService(app, HttpServerRequest.HttpServerRequest, HttpServerRequest.fromWeb(new Request(`http://service.test${path}`))),
      (response) => response.status
    )
}

describe("probes", () => {
  it.effect("answers /readyz from one check of the dependencies a second, however many ask", () =>
    Effect.gen(function*() {
      let checks = 0
      // A check that takes a turn of the scheduler, so that concurrent callers overlap it.
      const get = probed(Effect.andThen(Effect.sync(() => checks++), Effect.yieldNow))
      expect(yield* Effect.all(Array.from({ length: 50 }, () => get("/readyz")), { concurrency: "unbounded" })).toEqual(Array(50).fill(200))
      for (let i = 0; i < 50; i++) expect(yield* get("/readyz")).toBe(200)
      expect(checks).toBe(1)
      yield* TestClock.adjust("1 second")
      expect(yield* get("/readyz")).toBe(200)
      expect(checks).toBe(2)
    }))

  it.effect("keeps a failed check for the second too: 503 without asking again", () =>
    Effect.gen(function*() {
      let checks = 0
      const get = probed(Effect.andThen(Effect.sync(() => checks++), Effect.fail("database down")))
      for (let i = 0; i < 20; i++) expect(yield* get("/readyz")).toBe(503)
      expect(checks).toBe(1)
    }))

  it.effect("answers /healthz without checking anything, and hands every other path to the app", () =>
    Effect.gen(function*() {
      let checks = 0
      const get = probed(Effect.sync(() => checks++))
      expect(yield* get("/healthz")).toBe(200)
      expect(yield* get("/other")).toBe(200)
      expect(checks).toBe(0)
    }))
})
