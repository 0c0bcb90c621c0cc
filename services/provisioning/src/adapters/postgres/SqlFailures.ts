import type { SqlError } from "@effect/sql"

/** True when the statement failed on a unique constraint (optionally: on that index). */
export const isUniqueViolation = (error: SqlError.SqlError, index?: string): boolean => {
  const cause = error.cause as { readonly code?: unknown; readonly constraint?: unknown } | undefined
  return cause?.code === "23505" && (index === undefined || cause.constraint === index)
}
