import { integerAtLeast } from "@portfolio/platform/config"
import { Config, Context, Layer } from "effect"

export interface ReferentialSettingsShape {
  /** Bytes of encoded forests the read cache may hold, from `REFERENTIAL_READ_CACHE_MB`. */
  readonly readCacheBytes: number
}

export class ReferentialSettings extends Context.Service<
  ReferentialSettings,
  ReferentialSettingsShape
>()("@portfolio/referential/ReferentialSettings") {
  static readonly layer = Layer.effect(
    ReferentialSettings,
    integerAtLeast("REFERENTIAL_READ_CACHE_MB", 1, 64, "must be a whole number of megabytes, at least 1").pipe(
      Config.map((megabytes) => ({ readCacheBytes: megabytes * 1024 * 1024 }))
    )
  )
}
