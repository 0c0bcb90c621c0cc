/**
 * Whether a defect means that a dependency (PostgreSQL, so far) could not be reached, as opposed
 * to a bug. The adapters turn every unexpected SqlError into a defect; those that only say "the
 * database is not there right now" deserve a 503 with Retry-After, which clients retry, rather
 * than a 500, which they report.
 */

// Network failures of the socket below the driver.
const networkCodes = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN", "EPIPE"])

// SQLSTATEs of a server that is going away, starting or full: class 08 (connection exception),
// 57P01-57P03 (admin/crash shutdown, cannot connect now), 53300 (too many connections).
const unavailableSqlState = (code: string): boolean => code.startsWith("08") || /^57P0[123]$/.test(code) || code === "53300"

// node-postgres reports a lost or never-made connection with plain Errors and these messages.
const driverMessages = /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Failed to acquire connection/i

const field = (u: unknown, key: string): unknown => (typeof u === "object" && u !== null ? (u as Record<string, unknown>)[key] : undefined)

const describesOutage = (u: unknown): boolean => {
  const code = field(u, "code")
  if (typeof code === "string" && (networkCodes.has(code) || unavailableSqlState(code))) return true
  const message = field(u, "message")
  return typeof message === "string" && driverMessages.test(message)
}

export const isDependencyDown = (defect: unknown): boolean => {
  if (field(defect, "_tag") !== "SqlError") return false
  // The SqlError itself, its driver error, and an AggregateError's parts (a refused connection to a
  // host name that resolves to several addresses).
  const cause = field(defect, "cause")
  const errors = field(cause, "errors")
  return describesOutage(defect) || describesOutage(cause) || (Array.isArray(errors) && errors.some(describesOutage))
}
