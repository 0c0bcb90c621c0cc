import { PgClient } from "@effect/sql-pg"
import { SqlClient, SqlError } from "@effect/sql"
import { Config, Duration, Effect, Layer, Redacted, Stream, String as Str } from "effect"
import pg from "pg"
import { Metrics, observe } from "../telemetry/Metrics.js"

// int8 (bigint) columns hold money in minor units; JSON numbers carry them exactly up to 2^53,
// which the schemas enforce on the way in, so reading them as numbers is lossless.
pg.types.setTypeParser(20, (value: string) => {
  const n = Number(value)
  if (!Number.isSafeInteger(n)) throw new Error(`int8 value ${value} exceeds the safe integer range`)
  return n
})

/** How the pool is opened: `DATABASE_URL`, `DATABASE_POOL_SIZE` connections at most, named `SERVICE_NAME` in `pg_stat_activity`. */
const poolSettings = Config.all({
  url: Config.redacted("DATABASE_URL"),
  maxConnections: Config.integer("DATABASE_POOL_SIZE").pipe(Config.withDefault(10)),
  applicationName: Config.string("SERVICE_NAME").pipe(Config.withDefault("portfolio"))
})

// Without it node-postgres waits forever for an unreachable server or a free slot; with it the
// request fails in time to be answered 503 (Retry-After) well inside the gateway's upstream timeout.
const ConnectTimeout = Duration.seconds(5)

/**
 * The pool's usage under OpenTelemetry's database client conventions, read from node-postgres's
 * own counts whenever the metrics are read (nothing is recorded per query): connections idle and
 * in use, the most it may open, and the requests waiting for one (the sign of a pool too small).
 */
const observePool = (pool: pg.Pool, poolName: string) =>
  Effect.gen(function*() {
    const { meter } = yield* Metrics
    const connections = meter.createObservableUpDownCounter("db.client.connection.count", {
      unit: "{connection}",
      description: "Connections of the pool, by state: idle, or used by a query or a transaction."
    })
    const max = meter.createObservableUpDownCounter("db.client.connection.max", {
      unit: "{connection}",
      description: "The most connections the pool may open (DATABASE_POOL_SIZE)."
    })
    const pending = meter.createObservableUpDownCounter("db.client.connection.pending_requests", {
      unit: "{request}",
      description: "Requests for a connection waiting because every connection of the pool is in use."
    })
    const named = { "db.client.connection.pool.name": poolName }
    const idle = { ...named, "db.client.connection.state": "idle" }
    const used = { ...named, "db.client.connection.state": "used" }
    yield* observe({
      instruments: [connections, max, pending],
      read: Effect.sync(() => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount })),
      reuseFor: 0,
      report: (observed, counts) => {
        observed.observe(connections, counts.idle, idle)
        observed.observe(connections, counts.total - counts.idle, used)
        observed.observe(max, pool.options.max ?? 0, named)
        observed.observe(pending, counts.waiting, named)
      }
    })
  })

/**
 * The pool, opened as @effect/sql-pg opens its own (ready once a first query answers, within the
 * connect timeout; ended with the scope), but held here so that its counts can be observed.
 */
const openPool = (settings: Config.Config.Success<typeof poolSettings>) =>
  Effect.gen(function*() {
    const pool = new pg.Pool({
      connectionString: Redacted.value(settings.url),
      max: settings.maxConnections,
      connectionTimeoutMillis: Duration.toMillis(ConnectTimeout),
      application_name: settings.applicationName
    })
    // A connection lost while idle is dropped by the pool; the next query that needs one says so.
    pool.on("error", () => {})
    yield* Effect.acquireRelease(
      Effect.tryPromise({ try: () => pool.query("SELECT 1"), catch: (cause) => new SqlError.SqlError({ cause, message: "PgClient: Failed to connect" }) }),
      () => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption("1 second"))
    ).pipe(
      Effect.timeoutFail({ duration: ConnectTimeout, onTimeout: () => new SqlError.SqlError({ cause: new Error("Connection timed out"), message: "PgClient: Connection timed out" }) })
    )
    yield* observePool(pool, settings.applicationName)
    return pool
  })

/**
 * The PostgreSQL pool of a service, with its metrics. Built once per process: every call of a
 * `PgClient.layer*` factory opens another pool.
 */
export const PgLive = Layer.unwrapEffect(
  Effect.map(poolSettings, (settings) =>
    PgClient.layerFromPool({
      acquire: openPool(settings),
      transformResultNames: Str.snakeToCamel,
      transformQueryNames: Str.camelToSnake
    }))
)

/** The readiness of a service that needs its database: one round trip on the pool. */
export const databaseReady = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT 1`)

/**
 * True when a statement failed on a unique constraint (with `constraint`: on that one), so that a
 * store can answer a domain conflict rather than an outage.
 */
export const isUniqueViolation = (error: unknown, constraint?: string): boolean => {
  const cause = typeof error === "object" && error !== null && "cause" in error
    ? (error.cause as { readonly code?: unknown; readonly constraint?: unknown } | undefined)
    : undefined
  return cause?.code === "23505" && (constraint === undefined || cause.constraint === constraint)
}

/**
 * PostgreSQL's notifications on `channel`, on a connection of their own opened with the pool's
 * settings: the stream fails when that connection errors or ends (PostgreSQL restarted, the
 * backend terminated), so that its caller listens again. @effect/sql-pg's own `listen` keeps a
 * lost connection and goes silent for good: after a restart of PostgreSQL the outbox relays heard
 * nothing more and woke on their backstop only.
 */
export const listenTo = (client: PgClient.PgClient, channel: string): Stream.Stream<string, SqlError.SqlError> =>
  Stream.asyncScoped<string, SqlError.SqlError>((emit) => {
    const lost = (message: string) => (cause: unknown) => void emit.fail(new SqlError.SqlError({ cause, message }))
    return Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const connection = new pg.Client({
            ...(client.config.url === undefined ? {} : { connectionString: Redacted.value(client.config.url) }),
            ...(client.config.applicationName === undefined ? {} : { application_name: client.config.applicationName }),
            connectionTimeoutMillis: Duration.toMillis(ConnectTimeout)
          })
          connection.on("error", lost("the listening connection failed"))
          connection.on("end", () => lost("the listening connection ended")(new Error("connection ended")))
          connection.on("notification", (message) => {
            if (message.channel === channel) void emit.single(message.payload ?? "")
          })
          await connection.connect()
          await connection.query(`LISTEN ${pg.escapeIdentifier(channel)}`)
          return connection
        },
        catch: (cause) => new SqlError.SqlError({ cause, message: `could not listen to ${channel}` })
      }),
      (connection) =>
        Effect.promise(() => {
          connection.removeAllListeners("end")
          return connection.end().catch(() => undefined)
        }).pipe(Effect.interruptible, Effect.timeoutOption("1 second"))
    )
  })

