import { Config, ConfigProvider, Duration, Effect, Option, Result } from "effect"

/**
 * A setting refused at start, worded as Effect 3 worded it: `(Invalid data at NAME: "why")`, or
 * `(Missing data at NAME: "why")` for one that must be set. A service that refuses to start prints
 * this line, and operators, the chart's hooks and the tests read it; Effect 4's own wording
 * (`ConfigError(SchemaError(...))`) names the variable differently.
 */
export class SettingRefused extends Config.ConfigError {
  readonly kind: "Invalid" | "Missing"
  readonly setting: string
  readonly reason: string
  constructor(kind: "Invalid" | "Missing", setting: string, reason: string) {
    super(new ConfigProvider.SourceError({ message: reason }))
    this.kind = kind
    this.setting = setting
    this.reason = reason
  }
  override get message() {
    return `(${this.kind} data at ${this.setting}: "${this.reason}")`
  }
  override toString() {
    return this.message
  }
}

/** The refusal of a value `name` holds. */
export const invalidSetting = (name: string, reason: string): Config.ConfigError => new SettingRefused("Invalid", name, reason)

/** The refusal of an unset `name` that must be set. */
export const missingSetting = (name: string, reason: string): Config.ConfigError => new SettingRefused("Missing", name, reason)

/**
 * `name` read as text and turned into a value by `parse`, which fails with the reason to refuse
 * it: the refusal names the variable (`invalidSetting`).
 */
export const parsedSetting = <A>(name: string, parse: (text: string) => Result.Result<A, string>): Config.Config<A> =>
  Config.String(name).pipe(
    Config.mapEffect((text) =>
      Result.match(parse(text), {
        onFailure: (reason) => Effect.fail(invalidSetting(name, reason)),
        onSuccess: Effect.succeed
      })
    )
  )

/** An integer, read as Effect 3's `Config.integer` read it (`" 7 "` is 7), refused in its words. */
export const integerSetting = (name: string): Config.Config<number> =>
  parsedSetting(name, (text) => {
    const value = Number(text)
    return Number.isInteger(value) ? Result.succeed(value) : Result.fail(`Expected an integer value but received ${JSON.stringify(text)}`)
  })

/** A duration as Effect 3's `Config.duration` read it (`2 seconds`, `300 millis`), refused in its words. */
export const durationSetting = (name: string): Config.Config<Duration.Duration> =>
  parsedSetting(name, (text) =>
    Option.match(Duration.fromInput(text as Duration.Input), {
      onNone: () => Result.fail(`Expected a duration but received ${JSON.stringify(text)}`),
      onSome: Result.succeed
    }))

/** A boolean as Effect 3's `Config.boolean` read it (`true`, `yes`, `on`, `1` and their opposites), refused in its words. */
export const booleanSetting = (name: string): Config.Config<boolean> =>
  parsedSetting(name, (text) =>
    ["true", "yes", "on", "1"].includes(text)
      ? Result.succeed(true)
      : ["false", "no", "off", "0"].includes(text)
      ? Result.succeed(false)
      : Result.fail(`Expected a boolean value but received ${JSON.stringify(text)}`))

/**
 * An integer setting of at least `min`, `fallback` when unset. The check comes before the default
 * is attached, so that only an unset variable takes the default.
 */
export const integerAtLeast = (name: string, min: number, fallback: number, message = `must be at least ${min}`) =>
  integerSetting(name).pipe(
    Config.mapEffect((n) => (n >= min ? Effect.succeed(n) : Effect.fail(invalidSetting(name, message)))),
    Config.withDefault(fallback)
  )
