import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Result, Layer } from "effect"
import { ReferentialSettings } from "../../src/Config.js"

const load = (env: Record<string, string>) =>
  Effect.result(Effect.provide(
    ReferentialSettings,
    ReferentialSettings.layer.pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(env))))
  ))

describe("referential configuration", () => {
  it.effect("gives the read cache 64 MB unless REFERENTIAL_READ_CACHE_MB says otherwise", () =>
    Effect.gen(function*() {
      expect(Result.getOrThrow(yield* load({}))).toEqual({ readCacheBytes: 64 * 1024 * 1024 })
      expect(Result.getOrThrow(yield* load({ REFERENTIAL_READ_CACHE_MB: "3" }))).toEqual({ readCacheBytes: 3 * 1024 * 1024 })
    }))

  it.effect("refuses a value that is not a whole number of megabytes, at least 1, naming the variable", () =>
    Effect.gen(function*() {
      for (const value of ["0", "-2", "1.5", "lots"]) {
        const result = yield* load({ REFERENTIAL_READ_CACHE_MB: value })
        expect(Result.isFailure(result), value).toBe(true)
        expect(String(Result.getFailure(result).pipe((e) => e._tag === "Some" ? e.value : "")), value).toContain("REFERENTIAL_READ_CACHE_MB")
      }
    }))
})
