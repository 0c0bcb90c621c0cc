import { SqlClient, type Statement } from "effect/sql"
import { Clock, Config, ConfigProvider, Duration, Effect, Layer, Schedule } from "effect"
import { instrument } from "../telemetry/Metrics.js"

/**
 * Retention (docs/architecture.md, "Retention"; the product's periods in docs/product-rules.md):
 * the rows a service no longer needs are deleted in small batches, each one short statement of its
 * own, so that pruning never holds a long lock, and several replicas may prune at once.
 * One implementation of the rule; each service declares its tables and how long each is kept.
 */

/** How long a kind of row is kept: milliseconds after the moment the row stopped changing, or for ever (`off`). */
export type KeepFor = number | "forever"

const Units: Readonly<Record<string, number>> = { m: 60_000, h: 3_600_000, d: 86_400_000 }

/**
 * A retention period as operators write it: `30d`, `12h`, `90m`, or `off` to keep for ever; a
 * message saying what is wrong otherwise. Zero is refused rather than read as "keep nothing" or
 * "keep for ever": either would be a surprise, and `off` says the second plainly.
 */
export const parseRetention = (text: string): KeepFor | string => {
  const trimmed = text.trim()
  if (trimmed.toLowerCase() === "off") return "forever"
  const match = /^(\d{1,6})(m|h|d)$/.exec(trimmed)
  if (match === null) return `'${text}' is not a retention period such as 30d, 12h or 90m, or off to keep for ever`
  const ms = Number(match[1]) * Units[match[2]!]!
  return ms > 0 ? ms : `'${text}' must be longer than zero (off keeps for ever)`
}

/** Describes a period for logs and messages: `30d`, `off`. */
export const describeKeepFor = (keepFor: KeepFor): string =>
  keepFor === "forever" ? "off" : keepFor % Units["d"]! === 0 ? `${keepFor / Units["d"]!}d` : Duration.format(Duration.millis(keepFor))

// In the words Effect 3 used for a refused value, which a service's refusal to start prints.
const invalid = (name: string, message: string) =>
  Effect.fail(new Config.ConfigError(new ConfigProvider.SourceError({ message: `Invalid data at ${name}: "${message}"` })))

/**
 * A retention setting: `fallback` when unset, at least `atLeastMs` when set (unless `off`); a bad
 * value stops the service at start, naming the variable.
 */
export const retentionSetting = (name: string, fallback: string, atLeastMs = 0): Config.Config<KeepFor> =>
  Config.String(name).pipe(
    Config.withDefault(fallback),
    Config.mapEffect((text): Effect.Effect<KeepFor, Config.ConfigError> => {
      const parsed = parseRetention(text)
      if (parsed === "forever") return Effect.succeed(parsed)
      if (typeof parsed === "string") return invalid(name, parsed)
      if (parsed < atLeastMs) return invalid(name, `must be at least ${describeKeepFor(atLeastMs)} (or off), got '${text}'`)
      return Effect.succeed(parsed)
    })
  )

/**
 * The defaults of each kind, one variable per kind, shared by every service that keeps that kind
 * (docs/product-rules.md, "Retention", says why each).
 */
export const RetentionDefaults = {
  /** RETENTION_DELIVERIES: finished webhook deliveries, their attempts and events (Stripe and GitHub: 30 days). */
  deliveries: "30d",
  /** RETENTION_SECURITY_LOG: the security logs of the console, the gateway and provisioning. */
  securityLog: "365d",
  /** RETENTION_OUTBOX: outbox rows already published (the stream EVENTS keeps the events themselves). */
  outbox: "7d",
  /** RETENTION_PAT_REQUESTS: PAT requests decided, closed or expired. */
  patRequests: "30d",
  /** RETENTION_INTERVAL: how often each replica prunes. */
  interval: "10m"
} as const

/**
 * The shortest deliveries' retention: the events' durable, recreated after a day without a puller,
 * starts no earlier than this period ago (so that a pruned delivery is never made again); a week
 * lets it replay a week's outage.
 */
export const DeliveriesRetentionFloorMs = 7 * Units["d"]!

export const Retention = {
  deliveries: retentionSetting("RETENTION_DELIVERIES", RetentionDefaults.deliveries, DeliveriesRetentionFloorMs),
  securityLog: retentionSetting("RETENTION_SECURITY_LOG", RetentionDefaults.securityLog),
  outbox: retentionSetting("RETENTION_OUTBOX", RetentionDefaults.outbox),
  patRequests: retentionSetting("RETENTION_PAT_REQUESTS", RetentionDefaults.patRequests),
  /** `RETENTION_INTERVAL`: `10m` by default; `30s`, `10m`, `1h` and so on, above zero. */
  interval: Config.String("RETENTION_INTERVAL").pipe(
    Config.withDefault(RetentionDefaults.interval),
    Config.mapEffect((text) => {
      const match = /^(\d{1,6})(s|m|h)$/.exec(text.trim())
      const ms = match === null ? 0 : Number(match[1]) * (match[2] === "s" ? 1_000 : Units[match[2]!]!)
      return ms > 0 ? Effect.succeed(ms) : invalid("RETENTION_INTERVAL", `'${text}' is not an interval above zero such as 30s, 10m or 1h`)
    })
  )
}

/** Rows of another table that name a pruned row (`column` holds its key): deleted in the same statement, counted under their table. */
export interface PrunedWith {
  readonly table: string
  readonly column: string
}

/**
 * One kind of row a service prunes: the rows of `table` for which `prunable(cutoff)` holds, where
 * `cutoff` is `keepFor` before now. `key` is the primary key, by which each batch is deleted.
 * `prunable` should be answered by an index from the cutoff on, so that each batch reads little.
 */
export interface PruneRule {
  /** Schema-qualified (`webhook_dispatcher.deliveries`): the metric's `db.collection.name`. */
  readonly table: string
  readonly key: string
  readonly keepFor: KeepFor
  readonly prunable: (sql: SqlClient.SqlClient, cutoff: Date) => Statement.Fragment
  readonly with?: ReadonlyArray<PrunedWith>
}

/** Rows per batch: each batch one statement, locking these rows only, for milliseconds. */
export const PruneBatchSize = 500

export interface PruneOutcome {
  /** Rows deleted, by table (rules with nothing to delete are listed with 0). */
  readonly pruned: Readonly<Record<string, number>>
  /** Statements run, all rules together. */
  readonly batches: number
}

const prunedRows = instrument((meter) =>
  meter.createCounter("portfolio.retention.pruned_rows", {
    unit: "{row}",
    description: "Rows deleted by retention pruning, by table."
  })
)

/**
 * Deletes the rows `rule` allows, `batchSize` at a time, until a batch deletes fewer: each batch
 * is one statement (its own transaction when run outside one, as `pruneOnSchedule` runs it: inside a
 * caller's, the batches would hold their locks until its end) that picks its rows with
 * `FOR UPDATE SKIP LOCKED`, so that a row another transaction holds (a pruner on another replica,
 * a writer) is left for later rather than waited for, and deletes them by primary key, with the
 * rows of `rule.with` that name them.
 */
export const pruneInBatches = (rule: PruneRule, options: { readonly now: Date; readonly batchSize?: number }) =>
  Effect.gen(function*() {
    const pruned: Record<string, number> = { [rule.table]: 0 }
    for (const dependent of rule.with ?? []) pruned[dependent.table] = 0
    if (rule.keepFor === "forever") return { pruned, batches: 0 } satisfies PruneOutcome
    const sql = yield* SqlClient.SqlClient
    const batchSize = options.batchSize ?? PruneBatchSize
    const cutoff = new Date(options.now.getTime() - rule.keepFor)
    const key = sql(rule.key)
    const table = sql(rule.table)
    const dependents = rule.with ?? []
    const dependentSteps = dependents.map((dependent, i) =>
      sql`, ${sql(`d${i}`)} AS (DELETE FROM ${sql(dependent.table)} WHERE ${sql(dependent.column)} IN (SELECT key FROM batch) RETURNING 1)`
    )
    const dependentCounts = dependents.map((_, i) => sql`, (SELECT count(*) FROM ${sql(`d${i}`)})::int AS ${sql(`d${i}`)}`)
    const batch = sql<Record<string, number>>`
      WITH batch AS (
        SELECT ${key} AS key FROM ${table} WHERE ${rule.prunable(sql, cutoff)} LIMIT ${batchSize} FOR UPDATE SKIP LOCKED
      )${sql.join("", false, "")(dependentSteps)}, gone AS (DELETE FROM ${table} WHERE ${key} IN (SELECT key FROM batch) RETURNING 1)
      SELECT (SELECT count(*) FROM gone)::int AS gone${sql.join("", false, "")(dependentCounts)}`.withoutTransform
    let batches = 0
    for (;;) {
      const [counts] = yield* batch
      batches += 1
      const gone = counts?.["gone"] ?? 0
      pruned[rule.table] = pruned[rule.table]! + gone
      dependents.forEach((dependent, i) => (pruned[dependent.table] = pruned[dependent.table]! + (counts?.[`d${i}`] ?? 0)))
      if (gone < batchSize) return { pruned, batches } satisfies PruneOutcome
    }
  })

/**
 * One pass over every rule, in order (a table whose rows others reference comes after them), at
 * `now` (the clock's time when not given): the rows deleted are counted in
 * `portfolio.retention.pruned_rows` and, when there are any, logged in one line.
 */
export const pruneTables = (rules: ReadonlyArray<PruneRule>, options: { readonly now?: Date; readonly batchSize?: number } = {}) =>
  Effect.gen(function*() {
    const now = options.now ?? new Date(yield* Clock.currentTimeMillis)
    const counter = yield* prunedRows
    const pruned: Record<string, number> = {}
    let batches = 0
    for (const rule of rules) {
      const outcome = yield* pruneInBatches(rule, { now, ...(options.batchSize === undefined ? {} : { batchSize: options.batchSize }) })
      batches += outcome.batches
      for (const [table, count] of Object.entries(outcome.pruned)) {
        pruned[table] = (pruned[table] ?? 0) + count
        if (count > 0) counter.add(count, { "db.collection.name": table })
      }
    }
    const deleted = Object.fromEntries(Object.entries(pruned).filter(([, count]) => count > 0))
    if (Object.keys(deleted).length > 0) yield* Effect.logInfo("retention: old rows pruned", { pruned: deleted, batches })
    return { pruned, batches } satisfies PruneOutcome
  }).pipe(Effect.withSpan("retention.prune", undefined, { captureStackTrace: false }))

/** The first pass comes this long after start (jittered), once the service has settled. */
const FirstPassAfter = Duration.seconds(60)

/**
 * Prunes `rules` (read at start, so that a bad setting stops the service) every
 * `RETENTION_INTERVAL`, jittered (80 to 120 %) so that replicas started together drift apart,
 * the first pass about a minute after start. A failed pass is logged and the next one comes at
 * its time. Every replica runs it: the batches' `SKIP LOCKED` lets them share the work.
 */
export const pruneOnSchedule = <E, R>(rules: Effect.Effect<ReadonlyArray<PruneRule>, E, R>) =>
  Layer.effectDiscard(
    Effect.gen(function*() {
      const declared = yield* rules
      const intervalMs = yield* Retention.interval
      // Every table's series from the start, at 0: a dashboard or an alert tells "nothing pruned
      // yet" from "not scraped" (docs/observability.md).
      const counter = yield* prunedRows
      for (const rule of declared) {
        for (const table of [rule.table, ...(rule.with ?? []).map((dependent) => dependent.table)]) counter.add(0, { "db.collection.name": table })
      }
      yield* Effect.logDebug("retention pruning scheduled", {
        every: Duration.format(Duration.millis(intervalMs)),
        tables: Object.fromEntries(declared.map((rule) => [rule.table, describeKeepFor(rule.keepFor)]))
      })
      const pass = pruneTables(declared).pipe(
        Effect.catchCause((cause) => Effect.logWarning("retention pruning failed; the next pass comes at its time", cause))
      )
      yield* Effect.sleep(FirstPassAfter).pipe(
        Effect.andThen(pass),
        Effect.repeat(Schedule.spaced(Duration.millis(intervalMs)).pipe(Schedule.jittered)),
        Effect.interruptible,
        Effect.forkScoped
      )
    })
  )
