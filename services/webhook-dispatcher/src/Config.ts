import { booleanSetting, integerAtLeast, invalidSetting } from "@portfolio/platform/config"
import { Config, Context, Effect, Layer } from "effect"
import { parseDuration, parseSchedule } from "./domain/Durations.js"

export interface DispatcherSettingsShape {
  /** Delays before each retry, in milliseconds: 6 by default, so at most 7 POSTs per delivery. */
  readonly retrySchedule: ReadonlyArray<number>
  readonly disableAfterFailures: number
  /** The whole POST, the capped answer included. */
  readonly timeoutMs: number
  readonly allowPrivateTargets: boolean
  /** POSTs in flight in this process, all subscriptions together. */
  readonly concurrency: number
  /** POSTs in flight to one subscription, so that one slow endpoint holds at most this many slots. */
  readonly concurrencyPerSubscription: number
  /** How often due deliveries whose wake-up was lost are looked for in PostgreSQL. */
  readonly sweepIntervalMs: number
}

const invalid = (name: string, message: string) => Effect.fail(invalidSetting(name, message))

const durationSetting = (name: string, fallback: string) =>
  Config.String(name).pipe(
    Config.withDefault(fallback),
    Config.mapEffect((text) => {
      const parsed = parseDuration(text)
      if (typeof parsed === "string") return invalid(name, parsed)
      return parsed > 0 ? Effect.succeed(parsed) : invalid(name, "must be longer than zero")
    })
  )

export const DefaultRetrySchedule = "1m,5m,25m,2h,10h,50h"

export class DispatcherSettings extends Context.Service<
  DispatcherSettings,
  DispatcherSettingsShape
>()("@portfolio/webhook-dispatcher/DispatcherSettings") {
  static readonly config = Config.all({
    retrySchedule: Config.String("WEBHOOK_RETRY_SCHEDULE").pipe(
      Config.withDefault(DefaultRetrySchedule),
      Config.mapEffect((text) => {
        const parsed = parseSchedule(text)
        return typeof parsed === "string" ? invalid("WEBHOOK_RETRY_SCHEDULE", parsed) : Effect.succeed(parsed)
      })
    ),
    disableAfterFailures: integerAtLeast("WEBHOOK_DISABLE_AFTER_FAILURES", 1, 10),
    timeoutMs: durationSetting("WEBHOOK_TIMEOUT", "10s"),
    allowPrivateTargets: booleanSetting("WEBHOOK_ALLOW_PRIVATE_TARGETS").pipe(Config.withDefault(false)),
    concurrency: integerAtLeast("WEBHOOK_CONCURRENCY", 1, 64),
    concurrencyPerSubscription: integerAtLeast("WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION", 1, 8),
    sweepIntervalMs: durationSetting("WEBHOOK_SWEEP_INTERVAL", "10s")
  })

  static readonly layer = Layer.effect(DispatcherSettings, DispatcherSettings.config)

}
