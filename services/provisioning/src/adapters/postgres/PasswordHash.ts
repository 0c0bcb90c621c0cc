import { Effect } from "effect"
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto"

// OWASP's scrypt floor: N = 2^17, r = 8, p = 1 (128 MiB per hash, hence the raised maxmem).
const N = 2 ** 17
const r = 8
const p = 1
const keyLength = 32
const maxmem = 256 * 1024 * 1024

const derive = (password: string, salt: Buffer, cost: { N: number; r: number; p: number }) =>
  Effect.async<Buffer, Error>((resume) => {
    scrypt(password, salt, keyLength, { ...cost, maxmem }, (error, key) => resume(error ? Effect.fail(error) : Effect.succeed(key)))
  })

/** `scrypt$<N>$<r>$<p>$<salt b64>$<key b64>`: the parameters travel with the hash so they can be raised later. */
export const hashPassword = (password: string) =>
  Effect.gen(function*() {
    const salt = randomBytes(16)
    const key = yield* derive(password, salt, { N, r, p })
    return `scrypt$${N}$${r}$${p}$${salt.toString("base64")}$${key.toString("base64")}`
  })

export const verifyPassword = (password: string, stored: string) =>
  Effect.gen(function*() {
    const [scheme, n, rr, pp, salt, key] = stored.split("$")
    if (scheme !== "scrypt" || n === undefined || rr === undefined || pp === undefined || salt === undefined || key === undefined) return false
    const expected = Buffer.from(key, "base64")
    const actual = yield* derive(password, Buffer.from(salt, "base64"), { N: Number(n), r: Number(rr), p: Number(pp) })
    return actual.length === expected.length && timingSafeEqual(actual, expected)
  })
