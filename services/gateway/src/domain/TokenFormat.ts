import { Option } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { crc32 } from "node:zlib"

/**
 * The format the gateway's bearer tokens share (docs/security.md, "Token formats"): a literal
 * prefix naming the kind, 30 random base62 characters, then the CRC32 of those 30 in 6 base62
 * characters. The prefix lets secret scanners tell the kinds apart; the checksum lets them and the
 * gateway refuse a mistyped or invented token without a database round trip.
 */
const RandomLength = 30
const ChecksumLength = 6
/** Random characters a displayed prefix may show: enough to recognise a token, never to use it. */
const DisplayedRandomLength = 3

export const Base62Alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

const base62Tail = new RegExp(`^[0-9A-Za-z]{${RandomLength + ChecksumLength}}$`)

/** A token that has the right shape and checksum (it may still be unknown, revoked or expired). */
export interface WellFormedToken {
  readonly token: string
  readonly tokenHash: Uint8Array
  readonly tokenPrefix: string
}

export const encodeChecksum = (value: number): string => {
  let rest = value >>> 0
  let out = ""
  for (let i = 0; i < ChecksumLength; i++) {
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

export const hashToken = (token: string): Uint8Array => createHash("sha256").update(token, "utf8").digest()

/** One kind of token: its literal prefix, and the rules of its format over that prefix. */
export interface TokenFormat {
  readonly literalPrefix: string
  readonly length: number
  /** What of a token may ever be shown: the literal prefix and 3 random characters. */
  readonly displayPrefix: (token: string) => string
  readonly generate: (bytes?: (size: number) => Uint8Array) => WellFormedToken
  /** Checks prefix, shape and checksum only; no storage is consulted. */
  readonly parse: (candidate: string) => Option.Option<WellFormedToken>
}

export const tokenFormat = (literalPrefix: string): TokenFormat => {
  const length = literalPrefix.length + RandomLength + ChecksumLength
  const displayPrefix = (token: string) => token.slice(0, literalPrefix.length + DisplayedRandomLength)
  const wellFormed = (token: string): WellFormedToken => ({ token, tokenHash: hashToken(token), tokenPrefix: displayPrefix(token) })
  return {
    literalPrefix,
    length,
    displayPrefix,
    generate: (bytes) => {
      const randomPart = randomBase62(RandomLength, bytes)
      return wellFormed(`${literalPrefix}${randomPart}${checksumOf(randomPart)}`)
    },
    parse: (candidate) => {
      if (candidate.length !== length || !candidate.startsWith(literalPrefix)) return Option.none()
      const tail = candidate.slice(literalPrefix.length)
      if (!base62Tail.test(tail)) return Option.none()
      const randomPart = tail.slice(0, RandomLength)
      return tail.slice(RandomLength) === checksumOf(randomPart) ? Option.some(wellFormed(candidate)) : Option.none()
    }
  }
}
