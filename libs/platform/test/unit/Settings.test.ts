import { describe, expect, it } from "@effect/vitest"
import { type Config, ConfigProvider, Duration, Effect, Result } from "effect"
import { booleanSetting, durationSetting, integerAtLeast } from "../../src/config/Settings.js"

const read = <A>(config: Config.Config<A>, env: Record<string, string>) =>
  Effect.result(Effect.provideService(Effect.gen(function*() { return yield* config }), ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown(env)))

const refusal = <A>(config: Config.Config<A>, env: Record<string, string>) =>
  Effect.map(read(config, env), (result) => (Result.isFailure(result) ? String(result.failure) : "accepted"))

describe("the settings every service reads", () => {
  it.effect("read a boolean in every spelling operators have used, and refuse anything else in the words they know", () =>
    Effect.gen(function*() {
      for (const yes of ["true", "yes", "on", "1"]) expect(Result.getOrThrow(yield* read(booleanSetting("FLAG"), { FLAG: yes }))).toBe(true)
      for (const no of ["false", "no", "off", "0"]) expect(Result.getOrThrow(yield* read(booleanSetting("FLAG"), { FLAG: no }))).toBe(false)
      expect(yield* refusal(booleanSetting("FLAG"), { FLAG: "maybe" })).toBe(`(Invalid data at FLAG: "Expected a boolean value but received "maybe"")`)
    }))

  it.effect("read a duration as `30 seconds` or `500 millis`, and refuse anything else in the words operators know", () =>
    Effect.gen(function*() {
      expect(Duration.toMillis(Result.getOrThrow(yield* read(durationSetting("WAIT"), { WAIT: "30 seconds" })))).toBe(30_000)
      expect(Duration.toMillis(Result.getOrThrow(yield* read(durationSetting("WAIT"), { WAIT: "500 millis" })))).toBe(500)
      expect(yield* refusal(durationSetting("WAIT"), { WAIT: "soon" })).toBe(`(Invalid data at WAIT: "Expected a duration but received "soon"")`)
    }))

  it.effect("take an integer's default only when it is unset, and refuse one below its floor", () =>
    Effect.gen(function*() {
      expect(Result.getOrThrow(yield* read(integerAtLeast("N", 1, 7), {}))).toBe(7)
      expect(Result.getOrThrow(yield* read(integerAtLeast("N", 1, 7), { N: " 3 " }))).toBe(3)
      expect(yield* refusal(integerAtLeast("N", 1, 7), { N: "0" })).toBe(`(Invalid data at N: "must be at least 1")`)
    }))
})
