import { Cause, type Duration, Effect } from "effect"

/**
 * `effect`, a background loop of the service (a relay, a consumer, a watch), for the life of its
 * fiber: started again `pause` after each stop that is not an interruption, each stop logged as a
 * warning with `message`. A defect restarts it too: `Effect.retry` retries failures only, and a
 * transaction whose connection PostgreSQL dropped dies (its ROLLBACK fails, and @effect/sql makes
 * that a defect), which ended the referential's outbox relay for good, after one "restarting"
 * line, when PostgreSQL restarted under it (found by the drills: docs/architecture.md, "Replicas
 * and faults").
 */
export const restartForever = <A, E, R>(effect: Effect.Effect<A, E, R>, message: string, pause: Duration.Input): Effect.Effect<never, never, R> =>
  effect.pipe(
    Effect.catchCause((cause) => (Cause.hasInterruptsOnly(cause) ? Effect.interrupt : Effect.logWarning(message, cause))),
    Effect.andThen(Effect.sleep(pause)),
    Effect.forever
  )
