import { Schema } from "effect"

/**
 * Text accepted from callers. PostgreSQL `text` cannot hold U+0000, so a NUL character is refused
 * at the edge as a 400 instead of failing later as a storage error.
 */
export const InputText = Schema.String.pipe(
  Schema.filter((s) => !s.includes("\u0000"), { message: () => "must not contain the NUL character (U+0000)" })
)
