import { Option } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { crc32 } from "node:zlib"

/**
 * The personal access token format of docs/product-rules.md#authentication: `ap_pat_`, 30 random base62 characters, then
 * the CRC32 of those 30 characters in 6 base62 characters. The checksum lets secret scanners and
 * the gateway refuse a mistyped or invented token without a database round trip.
 */
const PatLiteralPrefix = "ap_pat_"
const PatRandomLength = 30
const PatChecksumLength = 6
export const PatLength = PatLiteralPrefix.length + PatRandomLength + PatChecksumLength
/** How much of a token may ever be shown: `ap_pat_` and 3 random characters. */
const PatDisplayLength = 10

export const Base62Alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

const shape = new RegExp(`^${PatLiteralPrefix}[0-9A-Za-z]{${PatRandomLength + PatChecksumLength}}$`)

/** A token that has the right shape and checksum (it may still be unknown, revoked or expired). */
export interface WellFormedPat {
  readonly token: string
  readonly tokenHash: Uint8Array
  readonly tokenPrefix: string
}

export const encodeChecksum = (value: number): string => {
  let rest = value >>> 0
  let out = ""
  for (let i = 0; i < PatChecksumLength; i++) {
    out = Base62Alphabet[rest % 62] + out
    rest = Math.floor(rest / 62)
  }
  return out
}

export const checksumOf = (randomPart: string): string => encodeChecksum(crc32(randomPart))

/**
 * `count` characters of `alphabet` from `bytes` by rejection sampling, so that every character is
 * equally likely (for base62, bytes of 248 = 4 * 62 and above are dropped).
 */
export const randomOf = (alphabet: string, count: number, bytes: (size: number) => Uint8Array = randomBytes): string => {
  const limit = Math.floor(256 / alphabet.length) * alphabet.length
  let out = ""
  while (out.length < count) {
    for (const byte of bytes(count * 2)) {
      if (byte < limit) out += alphabet[byte % alphabet.length]
      if (out.length === count) break
    }
  }
  return out
}

export const randomBase62 = (count: number, bytes?: (size: number) => Uint8Array): string => randomOf(Base62Alphabet, count, bytes)

export const hashPat = (token: string): Uint8Array => createHash("sha256").update(token, "utf8").digest()

export const displayPrefix = (token: string): string => token.slice(0, PatDisplayLength)

export const generatePat = (bytes?: (size: number) => Uint8Array): WellFormedPat => {
  const randomPart = randomBase62(PatRandomLength, bytes)
  const token = `${PatLiteralPrefix}${randomPart}${checksumOf(randomPart)}`
  return { token, tokenHash: hashPat(token), tokenPrefix: displayPrefix(token) }
}

/** Checks shape and checksum only; no storage is consulted. */
export const parsePat = (candidate: string): Option.Option<WellFormedPat> => {
  if (candidate.length !== PatLength || !shape.test(candidate)) return Option.none()
  const randomPart = candidate.slice(PatLiteralPrefix.length, PatLiteralPrefix.length + PatRandomLength)
  if (candidate.slice(PatLiteralPrefix.length + PatRandomLength) !== checksumOf(randomPart)) return Option.none()
  return Option.some({ token: candidate, tokenHash: hashPat(candidate), tokenPrefix: displayPrefix(candidate) })
}
