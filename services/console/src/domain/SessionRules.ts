import { createHash, randomBytes, timingSafeEqual } from "node:crypto"

export interface SessionPolicy {
  /** A session ends this long after sign-in, however active. */
  readonly absoluteMs: number
  /** ... and this long after its last request. */
  readonly idleMs: number
}

/** 256 random bits, URL-safe: the cookie's value and the forms' CSRF tokens. */
export const newSecret = () => randomBytes(32).toString("base64url")

/**
 * What the store keeps of a session id: its SHA-256. A dump of the sessions table gives no cookie
 * that works, and the id (256 random bits) needs no slow hash.
 */
export const sessionIdHash = (sessionId: string) => createHash("sha256").update(sessionId, "utf8").digest("hex")

/** The moment a session stops being valid, whichever of its two limits comes first. */
export const sessionEndMs = (policy: SessionPolicy, createdAtMs: number, lastSeenAtMs: number) =>
  Math.min(createdAtMs + policy.absoluteMs, lastSeenAtMs + policy.idleMs)

/** Recording every request's time would be a write per page; once a minute keeps idleness exact enough. */
export const shouldTouch = (lastSeenAtMs: number, nowMs: number) => nowMs - lastSeenAtMs >= 60_000

/** Constant-time comparison of a form's token with the expected one. */
export const sameToken = (given: string | undefined, expected: string) => {
  if (given === undefined) return false
  const a = Buffer.from(given, "utf8")
  const b = Buffer.from(expected, "utf8")
  return a.length === b.length && timingSafeEqual(a, b)
}
