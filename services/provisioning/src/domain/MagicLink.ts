import { Effect } from "effect"
import { createHash, randomBytes } from "node:crypto"

/**
 * 256 random bits, URL-safe. Only its hash is stored, so a database leak yields no usable link. An
 * effect rather than a function, so that the draw happens when a use case runs it, like any clock read.
 */
export const newMagicToken: Effect.Effect<string> = Effect.sync(() => randomBytes(32).toString("base64url"))

export const hashMagicToken = (token: string) => createHash("sha256").update(token, "utf8").digest("hex")
