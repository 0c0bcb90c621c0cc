import { Config } from "effect"

/**
 * An integer setting of at least `min`, `fallback` when unset. The check comes before the default
 * is attached: the other way round, Effect's refusal of a bad value names no variable.
 */
export const integerAtLeast = (name: string, min: number, fallback: number, message = `must be at least ${min}`) =>
  Config.integer(name).pipe(
    Config.validate({ message, validation: (n) => n >= min }),
    Config.withDefault(fallback)
  )
