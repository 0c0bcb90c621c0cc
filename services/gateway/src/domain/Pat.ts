import { hashToken, tokenFormat, type WellFormedToken } from "./TokenFormat.js"

export { Base62Alphabet, checksumOf, encodeChecksum, randomBase62, randomOf } from "./TokenFormat.js"

/**
 * The personal access token format of docs/product-rules.md#authentication: `ap_pat_`, 30 random
 * base62 characters, then the CRC32 of those 30 characters in 6 base62 characters
 * (domain/TokenFormat.ts, the format every token kind of the gateway shares).
 */
const PatFormat = tokenFormat("ap_pat_")

export const PatLength = PatFormat.length

export type WellFormedPat = WellFormedToken

export const hashPat = hashToken

/** How much of a token may ever be shown: `ap_pat_` and 3 random characters. */
export const displayPrefix = PatFormat.displayPrefix

export const generatePat = PatFormat.generate

/** Checks shape and checksum only; no storage is consulted. */
export const parsePat = PatFormat.parse
