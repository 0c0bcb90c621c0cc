import { RateLimitStore, type RateLimitStoreShape } from "../../../ports/rate-limit/RateLimitStore.js"
import { RateLimitHealth } from "../../../ports/rate-limit/RateLimitHealth.js"
import { Cause, Context, Deferred, Duration, Effect, Layer, Schedule } from "effect"
import { DeploymentIdConfig } from "@portfolio/platform/config"
import { NatsSettings, natsConnection, type NatsSettingsShape } from "@portfolio/platform/nats"
import { jetstream, JetStreamApiCodes, JetStreamApiError, jetstreamManager, StorageType } from "@nats-io/jetstream"
import { Kvm } from "@nats-io/kv"
import { createHash } from "node:crypto"
import { GatewaySettings, gatewayReplicas } from "../../../Config.js"
import type { WindowState } from "../../../domain/rate-limit/RateLimitWindow.js"
import { makeSlidingWindowLog } from "../../../domain/rate-limit/SlidingWindowLog.js"
import { countAlone, makeDegradedMode } from "./DegradedCounting.js"
import { makeCompareAndSet } from "./CompareAndSet.js"
import { makeHitBatcher } from "./HitBatcher.js"

export interface RateLimitStoreKvOptions {
  readonly nats: NatsSettingsShape
  readonly bucket: string
  /**
   * Put before every key, so that deployments sharing a NATS server (test systems running side by
   * side above all) do not count each other's `ip:` keys.
   */
  readonly keyPrefix: string
  /** The bucket's max age: a key nobody was counted under for a whole window holds nothing worth keeping. */
  readonly windowMs: number
  /** The longest a request waits on the bucket before it is counted in this process instead. */
  readonly timeout: Duration.Input
  /** Reads and compare-and-sets of one batch before it gives up on a key others keep writing. */
  readonly maxAttempts?: number
  /**
   * Gateway replicas sharing the bucket (`GATEWAY_REPLICAS`, 1 by default): while the bucket does
   * not answer, this replica admits at most ceil(limit / replicas) per key per window; while it
   * answers, this replica reserves at most floor((limit - seen) / (2 × replicas)) of a key's room.
   */
  readonly replicas?: number
  /** How long a reservation may be used, and how long a key stays quiet before its reservations are given back. */
  readonly shareLifetime?: Duration.Input
  /**
   * Write logs of more than a few hundred entries with their older entries grouped, so that a key's
   * value stays small whatever the limit and the rate (`RATE_LIMIT_GROUPED_LOG`). Gateways of earlier
   * versions read such a log as its newest entries only: turn it on once none is left.
   */
  readonly groupedLog?: boolean
  /** How long the bucket must answer without a miss before degraded mode ends. */
  readonly exactAfter?: Duration.Input
  readonly warnEvery?: Duration.Input
  readonly reconnectEvery?: Duration.Input
}

/** The bucket's key of a limiter key: the deployment's prefix and a hash, so that no token id or address is stored. */
export const bucketKeyOf = (keyPrefix: string, key: string) => `${keyPrefix}.${createHash("sha256").update(key, "utf8").digest("base64url").slice(0, 32)}`

/**
 * A promise's rejection as Effect 3's `tryPromise` wrapped it: the warnings below name the error's
 * message, which keeps Effect 3's wording.
 */
const attempt = <A>(f: (signal: AbortSignal) => PromiseLike<A>) =>
  Effect.tryPromise({ try: f, catch: (error) => new Cause.UnknownError(error, "An unknown error occurred in Effect.tryPromise") })

const isStreamNotFound = (error: unknown) => {
  const e = error instanceof Cause.UnknownError ? error.cause : error
  return e instanceof JetStreamApiError && e.code === JetStreamApiCodes.StreamNotFound
}

/**
 * The rate limiter's windows in a JetStream key-value bucket, shared by every gateway replica.
 *
 * Far from its limit, a key's requests are admitted with no round trip against room this replica
 * reserved in the key's log, and counted there at their own time afterwards; the first request of a
 * key, and every one once the reservation is spent or lapsed, is counted by read and compare-and-set
 * before it is answered (HitBatcher.ts, domain/LocalShare.ts). The limit is exact either way.
 *
 * Availability over strictness: while the bucket is unreachable or slower than `timeout`, a request
 * is counted in this process's own log against a share of the limit, ceil(limit / `replicas`), so
 * that the replicas together still admit about the limit (DegradedCounting.ts; a warning when
 * degraded mode begins and ends, and at most once per `warnEvery` in between). That log also
 * records every request the bucket counted here, and is asked first: a replica refuses what it
 * alone already knows to be over the limit without a round trip, and keeps refusing it across an
 * outage.
 */
export const makeRateLimitStoreKv = (options: RateLimitStoreKvOptions) =>
  Effect.gen(function*() {
    const local = makeSlidingWindowLog()
    const replicas = Math.max(1, options.replicas ?? 1)
    const degraded = yield* makeDegradedMode({
      bucket: options.bucket,
      replicas,
      exactAfterMs: Duration.toMillis(options.exactAfter ?? Duration.seconds(10))
    })
    const timeout = Duration.fromInputUnsafe(options.timeout)
    const timeoutMs = Math.max(1, Math.round(Duration.toMillis(timeout)))
    const warnEveryMs = Duration.toMillis(options.warnEvery ?? Duration.minutes(1))
    let batcher: ReturnType<typeof makeHitBatcher> | undefined
    let suspicion: Deferred.Deferred<void> | undefined
    let lastWarningAt = Number.NEGATIVE_INFINITY
    let unwarned = 0
    const connected = yield* Deferred.make<void>()
    const runFork = Effect.runForkWith(yield* Effect.context<never>())

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
      Effect.tap(
        Effect.sync(() => countAlone(local, replicas, key, limit, windowMs, nowMs)),
        () => Effect.andThen(degraded.missed(error), warn("rate limit counted in this process only: the JetStream key-value bucket did not answer", error))
      )

    const session = Effect.gen(function*() {
      const nc = yield* natsConnection(options.nats, { name: "gateway-rate-limits", timeout: 2_000, close: "close" })
      const js = jetstream(nc, { timeout: timeoutMs })
      const kv = yield* attempt(() =>
        new Kvm(js).create(options.bucket, {
          // Limiter state is worth nothing after a window: no disk write per request, no history.
          storage: StorageType.Memory,
          history: 1,
          // Kept on NATS_REPLICAS servers: a server lost does not reset every window.
          replicas: options.nats.replicas,
          ttl: options.windowMs,
          timeout: timeoutMs
        })
      )
      const jsm = yield* attempt(() => jetstreamManager(nc, { timeout: timeoutMs }))
      // On a cluster a bucket just created elects a leader of its own, and until it has one every
      // write fails: the requests meanwhile would be counted alone. The session opens once it has.
      yield* attempt(() => jsm.streams.info(`KV_${options.bucket}`)).pipe(
        Effect.filterOrFail((info) => info.cluster === undefined || (info.cluster.leader ?? "") !== "", () => new Error("the bucket has no leader yet")),
        Effect.retry({ schedule: Schedule.spaced("100 millis"), times: 100 })
      )
      batcher = makeHitBatcher(kv, {
        maxAttempts: options.maxAttempts ?? 10,
        // The version of the server this connection is on now: a reconnect may land on another.
        compareAndSet: makeCompareAndSet(js, options.bucket, () => nc.info?.version),
        replicas,
        lifetimeMs: Duration.toMillis(options.shareLifetime ?? Duration.seconds(2)),
        grouped: options.groupedLog === true,
        // A count made after its requests were answered failed: no request falls back, yet the bucket
        // did not answer (degraded mode's condition and warning), and may be gone.
        onSettleFailure: (error) => {
          if (suspicion !== undefined) Deferred.doneUnsafe(suspicion, Effect.void)
          runFork(degraded.missed(error))
        }
      })
      yield* Deferred.succeed(connected, undefined)
      yield* Effect.logInfo("rate limits counted in the JetStream key-value bucket", { bucket: options.bucket })
      // A deleted bucket answers reads with a timeout, like a slow server, and the handle would fail
      // forever on a healthy connection: after a failure, ask whether the stream is still there.
      for (;;) {
        const failed = yield* Deferred.make<void>()
        suspicion = failed
        const ended = yield* Effect.raceFirst(Effect.as(Effect.promise(() => nc.closed()), "closed"), Effect.as(Deferred.await(failed), "failed"))
        if (ended === "closed") return yield* Effect.fail(new Error("the NATS connection closed"))
        const gone = yield* attempt(() => jsm.streams.info(`KV_${options.bucket}`)).pipe(
          Effect.as(false),
          Effect.catch((error) => Effect.succeed(isStreamNotFound(error)))
        )
        if (gone) return yield* Effect.fail(new Error("the bucket was deleted"))
        yield* Effect.sleep(options.reconnectEvery ?? Duration.seconds(2))
      }
    }).pipe(
      Effect.scoped,
      Effect.ensuring(Effect.sync(() => {
        batcher?.close()
        batcher = undefined
      }))
    )

    yield* session.pipe(
      Effect.tapError((error) => Effect.andThen(degraded.missed(error), warn("rate-limit bucket unavailable; retrying", error))),
      Effect.retry(Schedule.spaced(options.reconnectEvery ?? Duration.seconds(2))),
      Effect.interruptible,
      Effect.forkScoped
    )

    const kvKeyOf = (key: string) => bucketKeyOf(options.keyPrefix, key)

    // The answers with no round trip: a refusal this replica alone already knows, or an admission
    // against the room it holds in the key's window. Without a session there is none: every answer
    // is then the degraded one, refusals included, so that they all state the same limit.
    const admitNow = (key: string, limit: number, windowMs: number, nowMs: number): WindowState | undefined => {
      if (batcher === undefined) return undefined
      const known = local.peek(key, limit, windowMs, nowMs)
      if (!known.allowed) return known
      const admitted = batcher.admitLocally(kvKeyOf(key), limit, windowMs, nowMs)
      if (admitted !== undefined) local.hit(key, limit, windowMs, nowMs)
      return admitted
    }

    const hit: RateLimitStoreShape["hit"] = (key, limit, windowMs, nowMs) => {
      const current = batcher
      if (current === undefined) return fallback(key, limit, windowMs, nowMs, new Error("not connected to NATS"))
      const immediate = admitNow(key, limit, windowMs, nowMs)
      if (immediate !== undefined) return Effect.succeed(immediate)
      const kvKey = kvKeyOf(key)
      return attempt((signal) => current.hit(kvKey, limit, windowMs, nowMs, signal)).pipe(
        Effect.timeoutOrElse({ duration: timeout, orElse: () => Effect.fail(new Error(`no answer within ${timeoutMs} ms`)) }),
        Effect.tap((state) => {
          if (state.allowed) local.hit(key, limit, windowMs, nowMs)
          return degraded.answered
        }),
        Effect.catch((error) => {
          if (suspicion !== undefined) Deferred.doneUnsafe(suspicion, Effect.void)
          return fallback(key, limit, windowMs, nowMs, error)
        })
      )
    }

    return {
      hit,
      /** Completes once the bucket is first open. */
      connected: Deferred.await(connected),
      condition: Effect.suspend(() => degraded.condition(batcher !== undefined))
    }
  })

/** How long start-up waits for the bucket, so that a fresh replica does not begin by counting alone. */
const StartupWait = Duration.seconds(5)

/**
 * The store of the running gateway and its health, from the NATS settings, the gateway's
 * (`RATE_LIMIT_BUCKET`, `RATE_LIMIT_STORE_TIMEOUT`, `RATE_LIMIT_GROUPED_LOG`) and `GATEWAY_REPLICAS`; keys are prefixed with this deployment's id,
 * so that deployments sharing a NATS server never count each other's requests.
 */
export const RateLimitStoreKv = Layer.effectContext(
  Effect.gen(function*() {
    const nats = yield* NatsSettings
    const deployment = yield* DeploymentIdConfig
    const { rateLimit, rateLimitBucket } = yield* GatewaySettings
    const { name: bucket, timeout, groupedLog } = rateLimitBucket
    const replicas = yield* gatewayReplicas
    const store = yield* makeRateLimitStoreKv({
      nats,
      bucket,
      keyPrefix: deployment,
      windowMs: rateLimit.windowMs,
      timeout,
      replicas,
      groupedLog
    })
    yield* store.connected.pipe(
      Effect.timeout(StartupWait),
      Effect.catch(() => Effect.logWarning("rate-limit bucket not reachable at start-up; counting in this process until it is", { bucket }))
    )
    return Context.make(RateLimitStore, RateLimitStore.of({ hit: store.hit })).pipe(
      Context.add(RateLimitHealth, RateLimitHealth.of({ condition: store.condition }))
    )
  })
)
