import { SqlError } from "effect/sql"

/**
 * Whether a defect means that a dependency (PostgreSQL, so far) could not be reached, as opposed
 * to a bug. The adapters turn every unexpected SqlError into a defect; those that only say "the
 * database is not there right now" deserve a 503 with Retry-After, which clients retry, rather
 * than a 500, which they report. The driver's failure is classified once, where the SqlError is
 * made (`pgError`, sql/Database.ts): a lost, refused or never-made connection, or a server going
 * away or full, is its `ConnectionError` reason.
 */
export const isDependencyDown = (defect: unknown): boolean =>
  SqlError.isSqlError(defect) && defect.reason._tag === "ConnectionError"
