import { WebhookEventKinds, type WebhookEventKind } from "@portfolio/domain"
import { DateTime, Result } from "effect"

/**
 * What `portfolio webhook` reads from its flags before anything is sent: plain functions answering
 * the value or the sentence that says what is wrong, so the commands refuse garbage as a usage error.
 */

/** The contract's bound on `graceSeconds` (`RotateSecretRequest`): a rotation keeps the old secret at most a week. */
export const MaxGraceSeconds = 7 * 24 * 3600

const unitMs = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const

/** `30s`, `15m`, `24h`, `7d`, `5000ms` or `0` as whole seconds, within 0 to 7 days. */
export const parseGraceDuration = (text: string): Result.Result<number, string> => {
  const trimmed = text.trim()
  const match = /^(\d{1,12})(ms|s|m|h|d)?$/.exec(trimmed)
  if (match === null || (match[2] === undefined && Number(match[1]) !== 0)) {
    return Result.fail(`'${text}' is not a duration: write a whole number and a unit, ms, s, m, h or d (30s, 15m, 24h, 7d).`)
  }
  const ms = Number(match[1]) * unitMs[(match[2] ?? "s") as keyof typeof unitMs]
  if (ms % 1000 !== 0) return Result.fail(`'${text}' is not a whole number of seconds.`)
  if (ms / 1000 > MaxGraceSeconds) return Result.fail(`'${text}' is longer than the grace allowed, 7d (${MaxGraceSeconds} seconds).`)
  return Result.succeed(ms / 1000)
}

const isKind = (kind: string): kind is WebhookEventKind => (WebhookEventKinds as ReadonlyArray<string>).includes(kind)

/** `application.created,das.submitted`: the kinds in the order given, once each. */
export const parseEventKinds = (text: string): Result.Result<readonly [WebhookEventKind, ...Array<WebhookEventKind>], string> => {
  const given = text.split(",").map((kind) => kind.trim()).filter((kind) => kind.length > 0)
  const known = `the kinds are ${WebhookEventKinds.join(", ")}`
  const unknown = given.filter((kind) => !isKind(kind))
  if (unknown.length > 0) {
    return Result.fail(`Unknown event kind${unknown.length > 1 ? "s" : ""} ${unknown.map((kind) => `'${kind}'`).join(", ")}: ${known}.`)
  }
  const [first, ...rest] = [...new Set(given.filter(isKind))]
  return first === undefined ? Result.fail(`No event kind given: ${known}.`) : Result.succeed([first, ...rest])
}

/** `Date` rolls 2026-02-30 over to March; a day the month does not have is a typo, not a time. */
const isCalendarDate = (ymd: string) => {
  const [year, month, day] = ymd.split("-").map(Number) as [number, number, number]
  const date = new Date(Date.UTC(year, month - 1, day))
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
}

/**
 * A calendar date (midnight UTC) or a date and time with `Z` or an offset. A time without a zone
 * is refused rather than read in the operator's own zone, which would re-send another window.
 */
export const parseSince = (text: string): Result.Result<DateTime.Utc, string> => {
  const trimmed = text.trim()
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(trimmed)
  const zoned = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i.test(trimmed)
  const date = new Date(trimmed)
  if ((dateOnly || zoned) && !Number.isNaN(date.getTime()) && isCalendarDate(trimmed.slice(0, 10))) {
    return Result.succeed(DateTime.fromDateUnsafe(date))
  }
  return Result.fail(
    /^\d{4}-\d{2}-\d{2}T[\d:.]+$/.test(trimmed)
      ? `'${text}' has no time zone: add Z (UTC) or an offset such as +02:00.`
      : `'${text}' is not an ISO 8601 time: write 2026-07-01 or 2026-07-01T10:00:00Z.`
  )
}
