import { randomInt } from "node:crypto"
import { crc32 } from "node:zlib"

/**
 * PAT format of docs/product-rules.md#authentication: `ap_pat_` + 30 base62 characters + 6 base62 characters of the
 * CRC32 of the random part, so that a scanner can tell a token offline. The format does not fix the
 * digit order of base62, so the suite learns it from real tokens rather than assuming one.
 */
export const patPrefix = "ap_pat_"
const upperFirst = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
const lowerFirst = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
const lettersFirst = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
const alphabets = [upperFirst, lowerFirst, lettersFirst]

const base62 = (value: number, alphabet: string, width: number) => {
  let out = ""
  let rest = value
  while (rest > 0) {
    out = alphabet[rest % 62]! + out
    rest = Math.floor(rest / 62)
  }
  return out.padStart(width, alphabet[0]!)
}

export const checksum = (random: string, alphabet: string) => base62(crc32(random), alphabet, 6)

/** The base62 digit order under which every given token's checksum verifies, if any. */
export const checksumAlphabet = (tokens: ReadonlyArray<string>): string | undefined =>
  alphabets.find((alphabet) =>
    tokens.every((token) => {
      const body = token.slice(patPrefix.length)
      return token.startsWith(patPrefix) && body.length === 36 && checksum(body.slice(0, 30), alphabet) === body.slice(30)
    }))

/** A token of the right shape and checksum that no system ever issued. */
export const forgeToken = (alphabet: string) => {
  const random = Array.from({ length: 30 }, () => alphabet[randomInt(62)]).join("")
  return `${patPrefix}${random}${checksum(random, alphabet)}`
}

/** The same token with one character of its checksum changed. */
export const breakChecksum = (token: string) => {
  const last = token.at(-1)!
  return `${token.slice(0, -1)}${last === "A" ? "B" : "A"}`
}
