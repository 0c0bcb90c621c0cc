import { Config, Context, Layer } from "effect"

export interface ReferentialSettingsShape {
  /** Bytes of encoded forests the read cache may hold, from `REFERENTIAL_READ_CACHE_MB`. */
  readonly readCacheBytes: number
}

export class ReferentialSettings extends Context.Tag("@portfolio/referential/ReferentialSettings")<
  ReferentialSettings,
  ReferentialSettingsShape
>() {
  static readonly layer = Layer.effect(
    ReferentialSettings,
    // Validated before the default is attached: the other way round, the refusal names no variable.
    Config.integer("REFERENTIAL_READ_CACHE_MB").pipe(
      Config.validate({ message: "must be a whole number of megabytes, at least 1", validation: (n) => n >= 1 }),
      Config.withDefault(256),
      Config.map((megabytes) => ({ readCacheBytes: megabytes * 1024 * 1024 }))
    )
  )
}
