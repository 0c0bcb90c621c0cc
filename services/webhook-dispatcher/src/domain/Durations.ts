/**
 * Durations as operators write them in settings (`1m,5m,25m,2h,10h,50h`, `10s`, `250ms`): a whole
 * number and one unit, nothing else, so that a typo is refused at start rather than read as zero.
 */
const Units: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }

/** Milliseconds of one duration, or a message saying what is wrong with it. */
export const parseDuration = (text: string): number | string => {
  const match = /^(\d{1,9})(ms|s|m|h)$/.exec(text.trim())
  if (match === null) return `'${text}' is not a duration such as 250ms, 10s, 5m or 2h`
  return Number(match[1]) * Units[match[2]!]!
}

/** A retry schedule: at least one delay, each positive, in the order written. */
export const parseSchedule = (text: string): ReadonlyArray<number> | string => {
  const parts = text.split(",").map((part) => part.trim())
  if (parts.length === 0 || parts.some((part) => part === "")) return "must be comma-separated durations such as 1m,5m,25m,2h,10h,50h"
  const delays: Array<number> = []
  for (const part of parts) {
    const parsed = parseDuration(part)
    if (typeof parsed === "string") return parsed
    if (parsed <= 0) return `'${part}' must be longer than zero`
    delays.push(parsed)
  }
  return delays
}
