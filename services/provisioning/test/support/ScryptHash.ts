import { Effect } from "effect"
import { scrypt } from "node:crypto"

/**
 * Whether `password` matches a stored `scrypt$<N>$<r>$<p>$<salt b64>$<key b64>` hash, read with the
 * parameters stored beside it. Written apart from the adapter's hashing, so that a test checks
 * the stored format rather than the adapter against itself.
 */
export const verifyPassword = (password: string, stored: string) =>
  Effect.callback<boolean, Error>((resume) => {
    const [scheme, N, r, p, salt, key] = stored.split("$")
    if (scheme !== "scrypt" || key === undefined || salt === undefined) return resume(Effect.succeed(false))
    const expected = Buffer.from(key, "base64")
    const cost = { N: Number(N), r: Number(r), p: Number(p), maxmem: 256 * 1024 * 1024 }
    scrypt(password, Buffer.from(salt, "base64"), expected.length, cost, (error, actual) =>
      resume(error ? Effect.fail(error) : Effect.succeed(actual.equals(expected))))
  })
