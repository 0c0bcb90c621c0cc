import { SqlClient, SqlError, type SqlConnection, Statement } from "effect/sql"
// The module alone, as @effect/sql-pg imports it: the `effect/reactivity` barrel loads the Atom modules too.
import * as Reactivity from "effect/reactivity/Reactivity"
import { Cause, Config, Context, Duration, Effect, Layer, Queue, Redacted, Stream, String as Str } from "effect"
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
  url: Config.Redacted("DATABASE_URL"),
  maxConnections: Config.Int("DATABASE_POOL_SIZE").pipe(Config.withDefault(10)),
  applicationName: Config.String("SERVICE_NAME").pipe(Config.withDefault("portfolio"))
})

type PoolSettings = Config.Success<typeof poolSettings>

// Without it node-postgres waits forever for an unreachable server or a free slot; with it the
// request fails in time to be answered 503 (Retry-After) well inside the gateway's upstream timeout.
const ConnectTimeout = Duration.seconds(5)

// Network failures of the socket below the driver.
const networkCodes = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN", "EPIPE"])

// SQLSTATEs of a server that is going away, starting or full: class 08 (connection exception),
// 57P01-57P03 (admin/crash shutdown, cannot connect now), 53300 (too many connections).
const unavailableSqlState = (code: string): boolean => code.startsWith("08") || /^57P0[123]$/.test(code) || code === "53300"

// node-postgres reports a lost or never-made connection with plain Errors and these messages.
const driverMessages = /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Failed to acquire connection/i

const field = (u: unknown, key: string): unknown => (typeof u === "object" && u !== null ? (u as Record<string, unknown>)[key] : undefined)

const describesOutage = (u: unknown): boolean => {
  const code = field(u, "code")
  if (typeof code === "string" && (networkCodes.has(code) || unavailableSqlState(code))) return true
  const message = field(u, "message")
  return typeof message === "string" && driverMessages.test(message)
}

/**
 * A failure of node-postgres as effect/sql's `SqlError`, its reason read from the driver's error:
 * `ConnectionError` when the database could not be reached (the socket, a server going away or
 * full, or the driver's own connection messages; an AggregateError's parts for a host name that
 * resolves to several addresses), which `isDependencyDown` answers 503; otherwise by SQLSTATE, as
 * @effect/sql-pg classifies its own (`UniqueViolation` with the constraint's name for 23505).
 */
export const pgError = (cause: unknown, message: string): SqlError.SqlError => {
  const props = { cause, message }
  const errors = field(cause, "errors")
  if (describesOutage(props) || describesOutage(cause) || (Array.isArray(errors) && errors.some(describesOutage))) {
    return new SqlError.SqlError({ reason: new SqlError.ConnectionError(props) })
  }
  const code = field(cause, "code")
  return new SqlError.SqlError({ reason: typeof code === "string" ? bySqlState(code, field(cause, "constraint"), props) : new SqlError.UnknownError(props) })
}

const bySqlState = (code: string, constraint: unknown, props: { readonly cause: unknown; readonly message: string }): SqlError.SqlErrorReason => {
  if (code.startsWith("28")) return new SqlError.AuthenticationError(props)
  if (code === "42501") return new SqlError.AuthorizationError(props)
  if (code.startsWith("42")) return new SqlError.SqlSyntaxError(props)
  if (code === "23505") return new SqlError.UniqueViolation({ ...props, constraint: typeof constraint === "string" && constraint !== "" ? constraint : "unknown" })
  if (code.startsWith("23")) return new SqlError.ConstraintError(props)
  if (code === "40P01") return new SqlError.DeadlockError(props)
  if (code === "40001") return new SqlError.SerializationError(props)
  if (code === "55P03") return new SqlError.LockTimeoutError(props)
  if (code === "57014") return new SqlError.StatementTimeoutError(props)
  return new SqlError.UnknownError(props)
}

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
 * The pool, ready once a first query answers, within the connect timeout; ended with the scope.
 */
const openPool = (settings: PoolSettings) =>
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
      Effect.tryPromise({ try: () => pool.query("SELECT 1"), catch: (cause) => pgError(cause, "PgClient: Failed to connect") }),
      () => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption("1 second"))
    ).pipe(
      Effect.timeoutOrElse({
        duration: ConnectTimeout,
        orElse: () => Effect.fail(pgError(new Error("Connection timed out"), "PgClient: Connection timed out"))
      })
    )
    yield* observePool(pool, settings.applicationName)
    return pool
  })

// A statement interrupted while it runs is cancelled on the server (best effort), so that an
// abandoned request does not keep its backend busy; one cancellation effect per client.
const cancellations = new WeakMap<pg.PoolClient, Effect.Effect<void>>()
const cancelOf = (pool: pg.Pool, client: pg.PoolClient): Effect.Effect<void> => {
  const known = cancellations.get(client)
  if (known !== undefined) return known
  const processId = (client as unknown as { readonly processID?: number }).processID
  const cancel = processId === undefined
    ? Effect.void
    : Effect.callback<void>((resume) => {
      if (pool.ending) return resume(Effect.void)
      pool.query(`SELECT pg_cancel_backend(${processId})`, () => resume(Effect.void))
    }).pipe(Effect.interruptible, Effect.timeoutOption("5 seconds"), Effect.asVoid)
  cancellations.set(client, cancel)
  return cancel
}

type RowsTransform = (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined

/**
 * A connection for effect/sql's client: `client` when one is held (a transaction, `reserve`),
 * otherwise each statement takes a connection of the pool for itself and gives it back.
 */
class PgConnection implements SqlConnection.Connection {
  constructor(private readonly pool: pg.Pool, private readonly client?: pg.PoolClient) {}

  private query<A>(config: pg.QueryConfig | pg.QueryArrayConfig, map: (result: pg.QueryResult) => A): Effect.Effect<A, SqlError.SqlError> {
    const pool = this.pool
    const held = this.client
    const run = (client: pg.PoolClient, resume: (effect: Effect.Effect<A, SqlError.SqlError>) => void) =>
      client.query(config, (error: Error | null, result: pg.QueryResult) =>
        resume(error ? Effect.fail(pgError(error, "Failed to execute statement")) : Effect.sync(() => map(result))))
    if (held !== undefined) {
      return Effect.callback<A, SqlError.SqlError>((resume) => {
        run(held, resume)
        return cancelOf(pool, held)
      })
    }
    return Effect.callback<A, SqlError.SqlError>((resume) => {
      let done = false
      let cancel: Effect.Effect<void> | undefined
      let client: pg.PoolClient | undefined
      const onError = (cause: Error) => {
        cleanup(cause)
        resume(Effect.fail(pgError(cause, "Connection error")))
      }
      // A client that failed is released with its error, so that the pool discards it.
      const cleanup = (cause?: Error) => {
        if (!done) client?.release(cause)
        done = true
        client?.off("error", onError)
      }
      pool.connect((cause, connected) => {
        if (cause) return resume(Effect.fail(pgError(cause, "Failed to acquire connection")))
        if (!connected) return resume(Effect.fail(pgError(new Error("No client returned"), "Failed to acquire connection")))
        if (done) return connected.release()
        client = connected
        client.once("error", onError)
        cancel = cancelOf(pool, client)
        run(client, (effect) => {
          cleanup()
          resume(effect)
        })
      })
      return Effect.suspend(() => (cancel === undefined ? Effect.sync(() => cleanup()) : Effect.ensuring(cancel, Effect.sync(() => cleanup()))))
    })
  }

  // Several statements in one text answer one result each; their rows come back as one array each.
  private rows(sql: string, params: ReadonlyArray<unknown>): Effect.Effect<ReadonlyArray<any>, SqlError.SqlError> {
    return this.query({ text: sql, values: params as Array<unknown> }, (result) => {
      const results: pg.QueryResult | ReadonlyArray<pg.QueryResult> = result
      return Array.isArray(results) ? results.map((r: pg.QueryResult) => r.rows ?? []) : result.rows ?? []
    })
  }

  execute(sql: string, params: ReadonlyArray<unknown>, transformRows: RowsTransform) {
    return transformRows === undefined ? this.rows(sql, params) : Effect.map(this.rows(sql, params), transformRows)
  }
  executeUnprepared(sql: string, params: ReadonlyArray<unknown>, transformRows: RowsTransform) {
    return this.execute(sql, params, transformRows)
  }
  executeRaw(sql: string, params: ReadonlyArray<unknown>) {
    return this.query({ text: sql, values: params as Array<unknown> }, (result): unknown => result)
  }
  executeValues(sql: string, params: ReadonlyArray<unknown>) {
    return this.query({ text: sql, values: params as Array<unknown>, rowMode: "array" }, (result): ReadonlyArray<ReadonlyArray<unknown>> => result.rows)
  }
  executeValuesUnprepared(sql: string, params: ReadonlyArray<unknown>) {
    return this.executeValues(sql, params)
  }
  // node-postgres reads a whole result at once (cursors need pg-cursor): the rows are streamed
  // from it, for the callers of `stream`.
  executeStream(sql: string, params: ReadonlyArray<unknown>, transformRows: RowsTransform) {
    return Stream.fromIterableEffect(this.execute(sql, params, transformRows))
  }
}

/**
 * A connection of the pool held until the scope closes (a transaction, `reserve`); released with
 * the error it met, if any, so that the pool discards it. Waiting for it can be interrupted.
 */
const reserveFrom = (pool: pg.Pool) =>
  Effect.uninterruptibleMask((restore) =>
    Effect.gen(function*() {
      const { client, release } = yield* restore(Effect.callback<{ readonly client: pg.PoolClient; readonly release: () => void }, SqlError.SqlError>((resume) => {
        let interrupted = false
        pool.connect((cause, client, done) => {
          if (cause) return resume(Effect.fail(pgError(cause, "Failed to acquire connection for transaction")))
          if (!client) return resume(Effect.fail(pgError(new Error("No client returned"), "Failed to acquire connection for transaction")))
          if (interrupted) return done()
          let failure: Error | undefined
          const onError = (error: Error) => (failure = error)
          client.on("error", onError)
          resume(Effect.succeed({
            client,
            release: () => {
              client.off("error", onError)
              done(failure)
            }
          }))
        })
        return Effect.sync(() => (interrupted = true))
      }))
      yield* Effect.addFinalizer(() => Effect.sync(release))
      return new PgConnection(pool, client)
    })
  )

/** What the outbox relay needs to open a listening connection of its own (`listenTo`). */
export interface PgClientConfig {
  readonly url: Redacted.Redacted
  readonly applicationName: string
}

/** The service's PostgreSQL client: effect/sql's `SqlClient` over node-postgres's pool, with its settings. */
export interface PgClient extends SqlClient.SqlClient {
  readonly config: PgClientConfig
}

export const PgClient = Context.Service<PgClient>("@portfolio/platform/PgClient")

const pgUrl = (url: Redacted.Redacted): URL | undefined => {
  try {
    return new URL(Redacted.value(url))
  } catch {
    return undefined
  }
}

/**
 * effect/sql's client over `pool`, as @effect/sql-pg 0.53 made it over node-postgres: `$n`
 * placeholders, camelCase names in statements written snake_case in PostgreSQL and back in rows
 * (not under `withoutTransforms`), transactions on a connection of their own with savepoints when
 * nested.
 */
const makeClient = (pool: pg.Pool, settings: PoolSettings) =>
  Effect.gen(function*() {
    const url = pgUrl(settings.url)
    const client = yield* SqlClient.make({
      acquirer: Effect.succeed(new PgConnection(pool)),
      transactionAcquirer: reserveFrom(pool),
      compiler: makeCompiler(Str.camelToSnake),
      driver: "pg",
      spanAttributes: [
        ["db.system.name", "postgresql"],
        ["db.namespace", url?.pathname.slice(1) || url?.username || "postgres"],
        ["server.address", url?.hostname || "localhost"],
        ["server.port", url?.port ? Number(url.port) : 5432]
      ],
      transformRows: Statement.defaultTransforms(Str.snakeToCamel).array
    })
    return Object.assign(client, { config: { url: settings.url, applicationName: settings.applicationName } }) satisfies PgClient
  })

const escape = Statement.defaultEscape("\"")

/** PostgreSQL's statement compiler: `$n` placeholders, quoted identifiers renamed by `transform`. */
const makeCompiler = (transform: (name: string) => string): Statement.Compiler =>
  Statement.makeCompiler({
    dialect: "pg",
    placeholder: (index) => `$${index}`,
    onIdentifier: (value, withoutTransform) => (withoutTransform ? escape(value) : escape(transform(value))),
    onRecordUpdate: (placeholders, alias, columns, values, returning) => [
      `(values ${placeholders}) AS ${alias}${columns}${returning ? ` RETURNING ${returning[0]}` : ""}`,
      returning ? values.flat().concat(returning[1]) : values.flat()
    ],
    // This client offers no custom fragments (no `json`: node-postgres encodes objects as JSON itself).
    onCustom: (custom) => {
      throw new Error(`PgClient: no custom fragment ${String(custom.kind)}`)
    }
  })

/**
 * The PostgreSQL pool of a service, with its metrics, as `PgClient` and effect/sql's `SqlClient`.
 * Built once per process: every build opens another pool.
 */
export const PgLive = Layer.effectContext(
  Effect.gen(function*() {
    const settings = yield* poolSettings
    const pool = yield* openPool(settings)
    const client = yield* makeClient(pool, settings)
    return Context.make(PgClient, client).pipe(Context.add(SqlClient.SqlClient, client))
  })
).pipe(Layer.provide(Reactivity.layer))

/** The readiness of a service that needs its database: one round trip on the pool. */
export const databaseReady = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT 1`)

/**
 * True when a statement failed on a unique constraint (with `constraint`: on that one), so that a
 * store can answer a domain conflict rather than an outage.
 */
export const isUniqueViolation = (error: unknown, constraint?: string): boolean =>
  SqlError.isSqlError(error) && error.reason._tag === "UniqueViolation" &&
  (constraint === undefined || error.reason.constraint === constraint)

/**
 * PostgreSQL's notifications on `channel`, on a connection of their own opened with the pool's
 * settings: the stream fails when that connection errors or ends (PostgreSQL restarted, the
 * backend terminated), so that its caller listens again; a connection kept after such a loss
 * would go silent for good, and the outbox relays would wake on their backstop only.
 */
export const listenTo = (client: PgClient, channel: string): Stream.Stream<string, SqlError.SqlError> =>
  Stream.callback<string, SqlError.SqlError>((queue) => {
    const lost = (message: string) => (cause: unknown) => void Queue.failCauseUnsafe(queue, Cause.fail(pgError(cause, message)))
    return Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const connection = new pg.Client({
            connectionString: Redacted.value(client.config.url),
            application_name: client.config.applicationName,
            connectionTimeoutMillis: Duration.toMillis(ConnectTimeout)
          })
          connection.on("error", lost("the listening connection failed"))
          connection.on("end", () => lost("the listening connection ended")(new Error("connection ended")))
          connection.on("notification", (message) => {
            if (message.channel === channel) Queue.offerUnsafe(queue, message.payload ?? "")
          })
          await connection.connect()
          await connection.query(`LISTEN ${pg.escapeIdentifier(channel)}`)
          return connection
        },
        catch: (cause) => pgError(cause, `could not listen to ${channel}`)
      }),
      (connection) =>
        Effect.promise(() => {
          connection.removeAllListeners("end")
          return connection.end().catch(() => undefined)
        }).pipe(Effect.interruptible, Effect.timeoutOption("1 second"))
    )
  })
