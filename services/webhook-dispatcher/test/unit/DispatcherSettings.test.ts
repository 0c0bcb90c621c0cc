import { ConfigProvider, Effect, Result } from "effect"
import { describe, expect, it } from "vitest"
import { DispatcherSettings } from "../../src/Config.js"

const read = (env: Record<string, string>) =>
  Effect.runSync(Effect.result(DispatcherSettings.config.pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown(env)))))

describe("the dispatcher's settings", () => {
  it("defaults to the product's rules: 6 retries from 1 min to 50 h, disabled after 10 failures, 10 s, no private targets", () => {
    const settings = read({})
    expect(Result.getOrThrow(settings)).toMatchObject({
      retrySchedule: [60_000, 300_000, 1_500_000, 7_200_000, 36_000_000, 180_000_000],
      disableAfterFailures: 10,
      timeoutMs: 10_000,
      allowPrivateTargets: false
    })
  })

  it("refuses a bad value at start, naming the variable", () => {
    for (const [name, value] of [["WEBHOOK_RETRY_SCHEDULE", "1m,soon"], ["WEBHOOK_TIMEOUT", "0s"], ["WEBHOOK_DISABLE_AFTER_FAILURES", "0"], ["WEBHOOK_ALLOW_PRIVATE_TARGETS", "maybe"]] as const) {
      const settings = read({ [name]: value })
      expect(Result.isFailure(settings), name).toBe(true)
      expect(String(Result.isFailure(settings) ? settings.failure : ""), name).toContain(name)
    }
  })
})
