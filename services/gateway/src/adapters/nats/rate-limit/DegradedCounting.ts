import { instrument } from "@portfolio/platform/telemetry"
import { Clock, Effect } from "effect"
import type { WindowState } from "../../../domain/rate-limit/RateLimitWindow.js"
import type { RateLimitCondition } from "../../../ports/rate-limit/RateLimitHealth.js"
import type { makeSlidingWindowLog } from "../../../domain/rate-limit/SlidingWindowLog.js"

type LocalLog = ReturnType<typeof makeSlidingWindowLog>

/**
 * What one replica may admit per key and window while it counts alone: with every replica cut off
 * from the bucket at once, the deployment then admits about `limit` (at most `replicas` × this),
 * rather than `replicas` × `limit`.
 */
const degradedShare = (limit: number, replicas: number) => Math.ceil(limit / Math.max(1, replicas))

/**
 * Counts a request that the bucket did not answer in this replica's own log, against the degraded
 * share. The log keeps every request this replica counted, through the bucket or not, against the
 * full `limit`: what it admitted before the outage counts against its share, and with one replica
 * the share is the limit and the answer the plain log's.
 *
 * The answer states the share as its limit (docs/product-rules.md#rate-limiting): `Limit`, `Remaining`
 * and `Reset` then describe the rule that applied and agree with one another (Limit − Remaining is
 * what was counted against it, and a 429 says how many requests that was).
 */
export const countAlone = (local: LocalLog, replicas: number, key: string, limit: number, windowMs: number, nowMs: number): WindowState => {
  const share = degradedShare(limit, replicas)
  const known = local.peek(key, limit, windowMs, nowMs)
  const counted = limit - known.remaining
  if (counted >= share) {
    // Past the share, a slot frees only once `counted - share + 1` requests have left the window,
    // and the log tells the oldest one only: a window from now is the first moment surely free.
    return { allowed: false, limit: share, remaining: 0, resetAtMs: counted === share ? known.resetAtMs : nowMs + windowMs }
  }
  const state = local.hit(key, limit, windowMs, nowMs)
  return { allowed: true, limit: share, remaining: share - (limit - state.remaining), resetAtMs: state.resetAtMs }
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

/**
 * Whether this replica counts alone, for an alert: a sample from the store's start, so that 0 (the
 * limit is exact) reads apart from no data (a gateway not scraped). No attribute: one store a process.
 */
const degradedGauge = instrument((meter) =>
  meter.createGauge("portfolio.gateway.rate_limit.degraded", {
    description: "1 while this gateway counts rate limits alone (degraded: the JetStream key-value bucket does not answer), 0 while the bucket counts them."
  })
)

/**
 * Degraded mode, entered when a request has to be counted alone (the bucket did not answer in
 * time, or there is no session), left once the bucket has answered again and gone `exactAfterMs`
 * without a miss: a server that answers one request in two would otherwise log a transition per
 * request. Each transition is one warning and one change of the gauge; the condition is the
 * readiness detail.
 */
export const makeDegradedMode = Effect.fnUntraced(function*(options: { readonly bucket: string; readonly replicas: number; readonly exactAfterMs: number }) {
  const gauge = yield* degradedGauge
  let since: number | undefined
  let reason = ""
  let lastMissAt = Number.NEGATIVE_INFINITY
  // Whether the bucket has answered since the last miss: time alone does not end degraded mode. A
  // NATS client keeps its session while it reconnects, so a quiet gateway asked for its condition
  // exactAfter after the last miss would otherwise read exact while NATS is still away.
  let answeredSinceMiss = false
  // Every transition goes through here, so that the gauge cannot disagree with the condition.
  const setDegradedSince = (at: number | undefined) => {
    since = at
    gauge.record(at === undefined ? 0 : 1)
  }
  setDegradedSince(undefined)

  const condition = (): RateLimitCondition =>
    since === undefined
      ? { degraded: false, store: "jetstream", replicas: options.replicas }
      : { degraded: true, store: "jetstream", replicas: options.replicas, since: new Date(since).toISOString(), reason }

  /** A request counted alone, or a session lost. */
  const missed = (error: unknown) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      lastMissAt = now
      answeredSinceMiss = false
      if (since !== undefined) return Effect.void
      setDegradedSince(now)
      reason = messageOf(error)
      return Effect.logWarning("rate limit degraded: each gateway replica counts alone until the JetStream key-value bucket answers again", {
        bucket: options.bucket,
        replicas: options.replicas,
        perReplica: `ceil(limit / ${options.replicas}) per key per window`,
        reason
      })
    })

  /** Leaves degraded mode when `connected`, the bucket has answered since the last miss and that miss is `exactAfterMs` old; enters it when not connected. */
  const settle = (connected: boolean) =>
    Effect.suspend(() => {
      if (!connected) return missed(new Error("not connected to NATS"))
      if (since === undefined || !answeredSinceMiss) return Effect.void
      return Effect.flatMap(Clock.currentTimeMillis, (now) => {
        if (since === undefined || now - lastMissAt < options.exactAfterMs) return Effect.void
        const degradedMs = now - since
        setDegradedSince(undefined)
        return Effect.logWarning("rate limit exact again: the JetStream key-value bucket answers", { bucket: options.bucket, degradedMs })
      })
    })

  return {
    missed,
    /** After a request the bucket answered: nothing to do on the hot path unless degraded. */
    answered: Effect.suspend(() => {
      if (since === undefined) return Effect.void
      answeredSinceMiss = true
      return settle(true)
    }),
    /** The condition now, after settling it against the session's state. */
    condition: (connected: boolean) => Effect.map(settle(connected), condition)
  }
})
