import type { SqlError } from "effect/sql"
import { Unavailable } from "@portfolio/domain"
import { Effect } from "effect"

/**
 * What every gateway store answers when PostgreSQL fails: the cause logged under the store's and
 * the operation's names, and a 503 that names only what is unavailable.
 */
export const storeUnavailable = (store: string, what: string) => (operation: string) => (cause: SqlError.SqlError | unknown) =>
  Effect.logError(`${store}: ${operation} failed`, cause).pipe(
    Effect.andThen(Effect.fail(new Unavailable({ detail: `The ${what} is unavailable; retry shortly.` })))
  )
