import { ScimDefaultCount, ScimMaxResults } from "@portfolio/domain"

/** Which Users of a list a request asks for: how many to skip, how many at most. */
export interface ScimListWindow {
  readonly offset: number
  readonly limit: number
}

const integerOr = (text: string | undefined, fallback: number) => {
  const value = text === undefined || text.trim() === "" ? Number.NaN : Number(text)
  // Bounded, so that no number reaches the storage that it cannot hold.
  return Number.isFinite(value) ? Math.min(Number.MAX_SAFE_INTEGER, Math.trunc(value)) : fallback
}

/**
 * `startIndex` and `count` of RFC 7644 3.4.2.4, read leniently as it says: a `startIndex` below 1
 * is 1, a negative `count` is 0 (the total alone), and `count` is capped at `ScimMaxResults`.
 * What is no number at all reads as absent.
 */
export const listWindowOf = (startIndex: string | undefined, count: string | undefined): ScimListWindow => ({
  offset: Math.max(1, integerOr(startIndex, 1)) - 1,
  limit: Math.min(ScimMaxResults, Math.max(0, integerOr(count, ScimDefaultCount)))
})
