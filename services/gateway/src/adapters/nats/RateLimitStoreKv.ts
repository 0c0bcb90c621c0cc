import { RateLimitStore, type RateLimitStoreShape, type WindowState } from "@portfolio/domain/ports/gateway/RateLimitStore"
import { Config, Deferred, Duration, Effect, Layer, Schedule } from "effect"
import { connect, type KV, StorageType } from "nats"
import { createHash } from "node:crypto"
import { GatewayConfig } from "../../GatewayConfig.js"
import { makeSlidingWindowLog } from "../memory/SlidingWindowLog.js"
import { memberRemovedDurableConfig } from "./MemberRemovedConsumer.js"

export const DefaultBucket = "gateway_rate_limits"

/** JetStream's "wrong last sequence": another replica wrote the key since it was read. */
const WrongLastSequence = 10071

export interface RateLimitStoreKvOptions {
  readonly servers: string
  readonly bucket: string
  /**
   * Put before every key, so that deployments sharing a NATS server (test systems running side by
   * side above all) do not count each other's `ip:` keys.
   */
  readonly keyPrefix: string
  /** The bucket's max age: a key nobody was counted under for a whole window holds nothing worth keeping. */
  readonly windowMs: number
  /** The longest a request waits on the bucket before it is counted in this process instead. */
  readonly timeout: Duration.DurationInput
  /** Reads and compare-and-sets of one batch before it gives up on a key others keep writing. */
  readonly maxAttempts?: number
  readonly warnEvery?: Duration.DurationInput
  readonly reconnectEvery?: Duration.DurationInput
}

const pushVarint = (out: Array<number>, value: number) => {
  let n = value
  while (n >= 128) {
    out.push((n % 128) + 128)
    n = Math.floor(n / 128)
  }
  out.push(n)
}

/**
 * A key's log as varints: the limit it was counted against, then each timestamp as the gap from the
 * one before (the first from 0). Gaps within a minute take at most 3 bytes, usually 1 or 2, so a full
 * log of 180 stays well under half a kilobyte.
 */
export const encodeLog = (limit: number, times: ReadonlyArray<number>): Uint8Array => {
  const out: Array<number> = []
  pushVarint(out, limit)
  let previous = 0
  for (const time of times) {
    pushVarint(out, time - previous)
    previous = time
  }
  return Uint8Array.from(out)
}

export const decodeLog = (bytes: Uint8Array): { readonly limit: number; readonly times: Array<number> } | undefined => {
  let i = 0
  const next = () => {
    let n = 0
    for (let scale = 1; i < bytes.length && scale <= 2 ** 56; scale *= 128) {
      const byte = bytes[i++]!
      n += (byte % 128) * scale
      if (byte < 128) return n
    }
    return undefined
  }
  const limit = next()
  if (limit === undefined) return undefined
  const times: Array<number> = []
  let previous = 0
  while (i < bytes.length) {
    const gap = next()
    if (gap === undefined) return undefined
    previous += gap
    times.push(previous)
  }
  return { limit, times }
}

interface Waiter {
  readonly limit: number
  readonly windowMs: number
  readonly nowMs: number
  abandoned: boolean
  readonly resolve: (state: WindowState) => void
  readonly reject: (error: unknown) => void
}

/**
 * The sliding-window logs in one bucket. Requests for a key that arrive while a read and
 * compare-and-set of that key is in flight wait and go together in the next one: a busy token costs
 * two round trips per batch rather than per request, and this process never races itself on a key,
 * so conflicts come only from other replicas.
 */
const makeKvLogs = (kv: KV, maxAttempts: number) => {
  const queues = new Map<string, Array<Waiter>>()

  const apply = async (kvKey: string, batch: ReadonlyArray<Waiter>): Promise<Array<WindowState>> => {
    for (let attempt = 1;; attempt++) {
      const entry = await kv.get(kvKey)
      const stored = entry !== null && entry.operation === "PUT" ? decodeLog(entry.value) : undefined
      let limit = stored?.limit
      let times = stored?.times ?? []
      let counted = false
      const states: Array<WindowState> = []
      for (const waiter of batch) {
        // As the in-process log: a key counted against another limit starts over.
        if (waiter.limit !== limit) {
          limit = waiter.limit
          times = []
        }
        const cutoff = waiter.nowMs - waiter.windowMs
        let expired = 0
        while (expired < times.length && times[expired]! <= cutoff) expired++
        if (expired > 0) times = times.slice(expired)
        const allowed = times.length < limit
        if (allowed) {
          // Replicas' clocks differ a little: keep the log sorted so that its head stays the oldest.
          let at = times.length
          while (at > 0 && times[at - 1]! > waiter.nowMs) at--
          times.splice(at, 0, waiter.nowMs)
          counted = true
        }
        states.push({ allowed, limit, remaining: limit - times.length, resetAtMs: times.length > 0 ? times[0]! + waiter.windowMs : waiter.nowMs })
      }
      // Refusals are not counted, and expiry needs no write: the window moves on by itself.
      if (!counted) return states
      try {
        await kv.put(kvKey, encodeLog(limit!, times), { previousSeq: entry?.revision ?? 0 })
        return states
      } catch (error) {
        const code = (error as { api_error?: { err_code?: number } } | null)?.api_error?.err_code
        if (code !== WrongLastSequence || attempt >= maxAttempts) throw error
      }
    }
  }

  const run = async (kvKey: string) => {
    for (;;) {
      const waiting = queues.get(kvKey)!
      if (waiting.length === 0) {
        queues.delete(kvKey)
        return
      }
      queues.set(kvKey, [])
      const batch = waiting.filter((waiter) => !waiter.abandoned)
      if (batch.length === 0) continue
      try {
        const states = await apply(kvKey, batch)
        batch.forEach((waiter, index) => waiter.resolve(states[index]!))
      } catch (error) {
        for (const waiter of batch) waiter.reject(error)
      }
    }
  }

  const hit = (kvKey: string, limit: number, windowMs: number, nowMs: number, signal: AbortSignal) =>
    new Promise<WindowState>((resolve, reject) => {
      const waiter: Waiter = { limit, windowMs, nowMs, abandoned: false, resolve, reject }
      // A request that gave up waiting is counted in process; it must not be counted here as well.
      signal.addEventListener("abort", () => {
        waiter.abandoned = true
      }, { once: true })
      const queue = queues.get(kvKey)
      if (queue !== undefined) {
        queue.push(waiter)
        return
      }
      queues.set(kvKey, [waiter])
      void run(kvKey)
    })

  return { hit }
}

/**
 * The rate limiter's windows in a JetStream key-value bucket, shared by every gateway replica.
 *
 * Availability over strictness: while the bucket is unreachable or slower than `timeout`, a request
 * is counted in this process's own log (a warning at most once per `warnEvery`), so each replica still
 * holds the limit on its own. That log also records every request the bucket counted here, and is
 * asked first: a replica refuses what it alone already knows to be over the limit without a round
 * trip, and keeps refusing it across an outage.
 */
export const makeRateLimitStoreKv = (options: RateLimitStoreKvOptions) =>
  Effect.gen(function*() {
    const local = makeSlidingWindowLog()
    const timeout = Duration.decode(options.timeout)
    const timeoutMs = Math.max(1, Math.round(Duration.toMillis(timeout)))
    const warnEveryMs = Duration.toMillis(options.warnEvery ?? Duration.minutes(1))
    let logs: ReturnType<typeof makeKvLogs> | undefined
    let lastWarningAt = Number.NEGATIVE_INFINITY
    let unwarned = 0
    const connected = yield* Deferred.make<void>()

    const warn = (message: string, error: unknown) =>
      Effect.suspend(() => {
        unwarned++
        const now = Date.now()
        if (now - lastWarningAt < warnEveryMs) return Effect.void
        lastWarningAt = now
        const requests = unwarned
        unwarned = 0
        return Effect.logWarning(message, { bucket: options.bucket, requests, error: error instanceof Error ? error.message : String(error) })
      })

    const fallback = (key: string, limit: number, windowMs: number, nowMs: number, error: unknown) =>
      Effect.zipLeft(
        Effect.sync(() => local.hit(key, limit, windowMs, nowMs)),
        warn("rate limit counted in this process only: the JetStream key-value bucket did not answer", error)
      )

    const session = Effect.gen(function*() {
      const nc = yield* Effect.acquireRelease(
        Effect.tryPromise(() => connect({ servers: options.servers, name: "gateway-rate-limits", maxReconnectAttempts: -1, timeout: 2_000 })),
        (connection) => Effect.promise(() => connection.close().catch(() => undefined))
      )
      const kv = yield* Effect.tryPromise(() =>
        nc.jetstream({ timeout: timeoutMs }).views.kv(options.bucket, {
          // Limiter state is worth nothing after a window: no disk write per request, no history.
          storage: StorageType.Memory,
          history: 1,
          ttl: options.windowMs,
          timeout: timeoutMs
        })
      )
      logs = makeKvLogs(kv, options.maxAttempts ?? 10)
      yield* Deferred.succeed(connected, undefined)
      yield* Effect.logInfo("rate limits counted in the JetStream key-value bucket", { bucket: options.bucket })
      yield* Effect.promise(() => nc.closed())
      return yield* Effect.fail(new Error("the NATS connection closed"))
    }).pipe(
      Effect.scoped,
      Effect.ensuring(Effect.sync(() => {
        logs = undefined
      }))
    )

    yield* session.pipe(
      Effect.tapError((error) => warn("rate-limit bucket unavailable; retrying", error)),
      Effect.retry(Schedule.spaced(options.reconnectEvery ?? Duration.seconds(2))),
      Effect.interruptible,
      Effect.forkScoped
    )

    const kvKeyOf = (key: string) => `${options.keyPrefix}.${createHash("sha256").update(key, "utf8").digest("base64url").slice(0, 32)}`

    const hit: RateLimitStoreShape["hit"] = (key, limit, windowMs, nowMs) => {
      const known = local.peek(key, limit, windowMs, nowMs)
      if (!known.allowed) return Effect.succeed(known)
      const current = logs
      if (current === undefined) return fallback(key, limit, windowMs, nowMs, new Error("not connected to NATS"))
      return Effect.tryPromise((signal) => current.hit(kvKeyOf(key), limit, windowMs, nowMs, signal)).pipe(
        Effect.timeoutFail({ duration: timeout, onTimeout: () => new Error(`no answer within ${timeoutMs} ms`) }),
        Effect.tap((state) => {
          if (state.allowed) local.hit(key, limit, windowMs, nowMs)
        }),
        Effect.catchAll((error) => fallback(key, limit, windowMs, nowMs, error))
      )
    }

    return {
      hit,
      /** Completes once the bucket is first open. */
      connected: Deferred.await(connected)
    }
  })

const bucketName = Config.string("RATE_LIMIT_BUCKET").pipe(
  Config.withDefault(DefaultBucket),
  Config.validate({ message: "must be letters, digits, '-' or '_'", validation: (name) => /^[-\w]+$/.test(name) })
)

/** How long start-up waits for the bucket, so that a fresh replica does not begin by counting alone. */
const StartupWait = Duration.seconds(5)

/**
 * The store of the running gateway, from `NATS_URL`, `RATE_LIMIT_BUCKET` and
 * `RATE_LIMIT_STORE_TIMEOUT`; keys are prefixed with this deployment's identity (its database, as the
 * `member.removed` durable).
 */
export const RateLimitStoreKvLive = Layer.scoped(
  RateLimitStore,
  Effect.gen(function*() {
    const servers = yield* Config.string("NATS_URL").pipe(Config.withDefault("nats://127.0.0.1:4222"))
    const bucket = yield* bucketName
    const timeout = yield* Config.duration("RATE_LIMIT_STORE_TIMEOUT").pipe(Config.withDefault(Duration.millis(300)))
    const deployment = yield* memberRemovedDurableConfig
    const { rateLimit } = yield* GatewayConfig
    const store = yield* makeRateLimitStoreKv({
      servers,
      bucket,
      keyPrefix: createHash("sha256").update(deployment, "utf8").digest("hex").slice(0, 16),
      windowMs: rateLimit.windowMs,
      timeout
    })
    yield* store.connected.pipe(
      Effect.timeout(StartupWait),
      Effect.catchAll(() => Effect.logWarning("rate-limit bucket not reachable at start-up; counting in this process until it is", { bucket }))
    )
    return RateLimitStore.of({ hit: store.hit })
  })
)

export const rateLimitStoreKind = Config.literal("jetstream", "memory")("RATE_LIMIT_STORE").pipe(Config.withDefault("jetstream" as const))

