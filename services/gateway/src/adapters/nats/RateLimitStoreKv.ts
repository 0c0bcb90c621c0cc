import { RateLimitStore, type RateLimitStoreShape, type WindowState } from "../../ports/RateLimitStore.js"
import { Cause, Config, Deferred, Duration, Effect, Layer, Schedule } from "effect"
import { DeploymentIdConfig, NatsConfig, natsConnection } from "@portfolio/platform"
import { type KV, StorageType } from "nats"
import { createHash } from "node:crypto"
import { GatewayConfig } from "../../Config.js"
import { makeSlidingWindowLog } from "../memory/SlidingWindowLog.js"

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

class Reader {
  constructor(readonly bytes: Uint8Array, public at = 0) {}
  varint(): number {
    let n = 0
    for (let scale = 1; this.at < this.bytes.length && scale <= 2 ** 56; scale *= 128) {
      const byte = this.bytes[this.at++]!
      n += (byte % 128) * scale
      if (byte < 128) return n
    }
    throw new Error("truncated rate-limit log")
  }
}

/**
 * One key's log as stored: varints of the limit it was counted against, the number of timestamps,
 * the newest, the oldest, then each later timestamp as the gap from the one before, oldest first.
 * Gaps within a minute take 1 to 3 bytes, so a full log of 180 stays under half a kilobyte. With the
 * count and the newest up front, a hit reads only the gaps it evicts and appends its own after the
 * rest of the bytes, copied as they are: a generous limit costs bytes, not work per timestamp.
 */
export class StoredLog {
  private head = 0
  private count = 0
  private newest = 0
  private body: Reader = new Reader(new Uint8Array(0))
  private bodyLeft = 0
  private appended: Array<number> = []
  private appendedAt = 0

  constructor(public limit: number) {}

  static decode(bytes: Uint8Array): StoredLog | undefined {
    try {
      const reader = new Reader(bytes)
      const log = new StoredLog(reader.varint())
      log.count = reader.varint()
      if (log.count > 0) {
        log.newest = reader.varint()
        log.head = reader.varint()
        log.body = reader
        log.bodyLeft = log.count - 1
      }
      return log
    } catch {
      return undefined
    }
  }

  static of(limit: number, times: ReadonlyArray<number>): StoredLog {
    const log = new StoredLog(limit)
    for (const time of times) log.push(time)
    return log
  }

  get size(): number {
    return this.count
  }

  get oldest(): number {
    return this.head
  }

  private next(): number {
    if (this.bodyLeft > 0) {
      this.bodyLeft--
      return this.body.varint()
    }
    return this.appended[this.appendedAt++]!
  }

  evictThrough(cutoff: number): void {
    while (this.count > 0 && this.head <= cutoff) {
      this.count--
      if (this.count === 0) this.clear()
      else this.head += this.next()
    }
  }

  times(): Array<number> {
    const copy = StoredLog.decode(this.encode())!
    const times: Array<number> = []
    for (let time = copy.head, left = copy.count; left > 0; left--) {
      times.push(time)
      if (left > 1) time += copy.next()
    }
    return times
  }

  push(time: number): void {
    if (this.count === 0) {
      this.head = time
      this.newest = time
    } else if (time >= this.newest) {
      this.appended.push(time - this.newest)
      this.newest = time
    } else {
      // Replicas' clocks differ a little: keep the log sorted so that its head stays the oldest.
      const times = this.times()
      let at = times.length
      while (at > 0 && times[at - 1]! > time) at--
      times.splice(at, 0, time)
      this.clear()
      for (const t of times) this.push(t)
      return
    }
    this.count++
  }

  encode(): Uint8Array {
    const header: Array<number> = []
    pushVarint(header, this.limit)
    pushVarint(header, this.count)
    if (this.count > 0) {
      pushVarint(header, this.newest)
      pushVarint(header, this.head)
    }
    const rest = this.bodyLeft > 0 ? this.body.bytes.subarray(this.body.at) : new Uint8Array(0)
    const tail: Array<number> = []
    for (let i = this.appendedAt; i < this.appended.length; i++) pushVarint(tail, this.appended[i]!)
    const out = new Uint8Array(header.length + rest.length + tail.length)
    out.set(header, 0)
    out.set(rest, header.length)
    out.set(tail, header.length + rest.length)
    return out
  }

  private clear(): void {
    this.count = 0
    this.body = new Reader(new Uint8Array(0))
    this.bodyLeft = 0
    this.appended = []
    this.appendedAt = 0
  }
}

const isStreamNotFound = (error: unknown) => {
  const e = (error instanceof Cause.UnknownException ? error.error : error) as { api_error?: { err_code?: number }; message?: string } | null
  return e?.api_error?.err_code === 10059 || e?.message === "stream not found"
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
      let log = (entry !== null && entry.operation === "PUT" ? StoredLog.decode(entry.value) : undefined) ?? new StoredLog(batch[0]!.limit)
      let counted = false
      const states: Array<WindowState> = []
      for (const waiter of batch) {
        // As the in-process log: a key counted against another limit starts over.
        if (waiter.limit !== log.limit) log = new StoredLog(waiter.limit)
        log.evictThrough(waiter.nowMs - waiter.windowMs)
        const allowed = log.size < log.limit
        if (allowed) {
          log.push(waiter.nowMs)
          counted = true
        }
        states.push({ allowed, limit: log.limit, remaining: log.limit - log.size, resetAtMs: log.size > 0 ? log.oldest + waiter.windowMs : waiter.nowMs })
      }
      // Refusals are not counted, and expiry needs no write: the window moves on by itself.
      if (!counted) return states
      try {
        await kv.put(kvKey, log.encode(), { previousSeq: entry?.revision ?? 0 })
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
    let suspicion: Deferred.Deferred<void> | undefined
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
      const nc = yield* natsConnection(options, { name: "gateway-rate-limits", timeout: 2_000, noAsyncTraces: true, close: "close" })
      const kv = yield* Effect.tryPromise(() =>
        nc.jetstream({ timeout: timeoutMs }).views.kv(options.bucket, {
          // Limiter state is worth nothing after a window: no disk write per request, no history.
          storage: StorageType.Memory,
          history: 1,
          ttl: options.windowMs,
          timeout: timeoutMs
        })
      )
      const jsm = yield* Effect.tryPromise(() => nc.jetstreamManager({ timeout: timeoutMs }))
      logs = makeKvLogs(kv, options.maxAttempts ?? 10)
      yield* Deferred.succeed(connected, undefined)
      yield* Effect.logInfo("rate limits counted in the JetStream key-value bucket", { bucket: options.bucket })
      // A deleted bucket answers reads with a timeout, like a slow server, and the handle would fail
      // forever on a healthy connection: after a failure, ask whether the stream is still there.
      for (;;) {
        const failed = yield* Deferred.make<void>()
        suspicion = failed
        const ended = yield* Effect.raceFirst(Effect.as(Effect.promise(() => nc.closed()), "closed"), Effect.as(Deferred.await(failed), "failed"))
        if (ended === "closed") return yield* Effect.fail(new Error("the NATS connection closed"))
        const gone = yield* Effect.tryPromise(() => jsm.streams.info(`KV_${options.bucket}`)).pipe(
          Effect.as(false),
          Effect.catchAll((error) => Effect.succeed(isStreamNotFound(error)))
        )
        if (gone) return yield* Effect.fail(new Error("the bucket was deleted"))
        yield* Effect.sleep(options.reconnectEvery ?? Duration.seconds(2))
      }
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
        Effect.catchAll((error) => {
          if (suspicion !== undefined) Deferred.unsafeDone(suspicion, Effect.void)
          return fallback(key, limit, windowMs, nowMs, error)
        })
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
 * `RATE_LIMIT_STORE_TIMEOUT`; keys are prefixed with this deployment's id, so that deployments
 * sharing a NATS server never count each other's requests.
 */
export const RateLimitStoreKvLive = Layer.scoped(
  RateLimitStore,
  Effect.gen(function*() {
    const { servers } = yield* NatsConfig
    const bucket = yield* bucketName
    const timeout = yield* Config.duration("RATE_LIMIT_STORE_TIMEOUT").pipe(Config.withDefault(Duration.millis(300)))
    const deployment = yield* DeploymentIdConfig
    const { rateLimit } = yield* GatewayConfig
    const store = yield* makeRateLimitStoreKv({
      servers,
      bucket,
      keyPrefix: deployment,
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

