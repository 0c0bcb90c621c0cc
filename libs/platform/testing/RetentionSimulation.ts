import { SqlClient } from "effect/sql"
import { Effect, References } from "effect"
import { pruneTables, type PruneRule } from "../src/sql/Retention.js"

/**
 * Days of simulated traffic against a service's retention (docs/architecture.md, "Retention"):
 * each day inserts that day's rows, stamped within the day, then prunes as the service does with
 * `now` at the day's end, then counts each table. No clock is waited for: the days are timestamps.
 */

export const DayMs = 86_400_000

export interface SimulatedDay {
  readonly day: number
  readonly rows: Readonly<Record<string, number>>
  readonly pruned: Readonly<Record<string, number>>
}

export const simulateRetention = <E, R>(options: {
  readonly days: number
  /** Midnight of the first day. */
  readonly start: Date
  readonly rules: ReadonlyArray<PruneRule>
  readonly tables: ReadonlyArray<string>
  /** Inserts day `day`'s rows (1 for the first), stamped from `dayStart` until before `dayStart` + 1 day. */
  readonly traffic: (day: number, dayStart: Date) => Effect.Effect<void, E, R>
}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const figures: Array<SimulatedDay> = []
    for (let day = 1; day <= options.days; day++) {
      const dayStart = new Date(options.start.getTime() + (day - 1) * DayMs)
      yield* options.traffic(day, dayStart)
      const { pruned } = yield* pruneTables(options.rules, { now: new Date(dayStart.getTime() + DayMs) })
      // Every table counted in one statement: a year of days is thousands of them.
      const counted = yield* sql<{ readonly n: number }>`${sql.join(" UNION ALL ", false)(
        options.tables.map((table, i) => sql`(SELECT ${i} AS i, count(*)::int AS n FROM ${sql(table)})`)
      )} ORDER BY i`.withoutTransform
      const rows = Object.fromEntries(options.tables.map((table, i) => [table, counted[i]!.n]))
      figures.push({ day, rows, pruned })
    }
    return figures
    // A pass's log line a day would be hundreds of lines: the figures say it all.
  }).pipe(Effect.provideService(References.MinimumLogLevel, "Warn"))

/** The largest change of `table`'s row count from one day to any later day, from `fromDay` on. */
export const spreadFrom = (figures: ReadonlyArray<SimulatedDay>, table: string, fromDay: number): number => {
  const counts = figures.filter((f) => f.day >= fromDay).map((f) => f.rows[table]!)
  return Math.max(...counts) - Math.min(...counts)
}

/**
 * The figures as a table, rows per table at the end of chosen days (the first week, then around
 * the longest period), for the test's output: what the closing note of a change quotes.
 */
export const printFigures = (title: string, figures: ReadonlyArray<SimulatedDay>, days: ReadonlyArray<number>) =>
  Effect.sync(() => {
    const tables = Object.keys(figures[0]?.rows ?? {})
    const chosen = figures.filter((f) => days.includes(f.day))
    const lines = [
      `${title}: rows at the end of each simulated day (pruned that day)`,
      ["day", ...tables].join("\t"),
      ...chosen.map((f) => [String(f.day), ...tables.map((t) => `${f.rows[t]} (-${f.pruned[t] ?? 0})`)].join("\t"))
    ]
    // The figures are the point of the simulation: printed whatever the log level.
    process.stdout.write(`${lines.join("\n")}\n`)
  })
