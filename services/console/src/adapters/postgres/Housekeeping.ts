import { Clock, Effect, Layer, Schedule } from "effect"
import { ConsoleSettings } from "../../Config.js"
import { SessionRepository } from "../../ports/SessionRepository.js"
import { SignInAttempts } from "../../ports/SignInAttempts.js"

/**
 * Removes what can no longer count: sessions idle past their limit and attempts older than the
 * lockout window. Every replica does it; the deletions are idempotent.
 */
export const HousekeepingLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const settings = yield* ConsoleSettings
    const sessions = yield* SessionRepository
    const attempts = yield* SignInAttempts
    const sweep = Effect.gen(function*() {
      const nowMs = yield* Clock.currentTimeMillis
      yield* sessions.removeIdleSince(nowMs - settings.session.idleMs)
      yield* attempts.removeBefore(nowMs - settings.lockout.windowMs)
    }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("console housekeeping failed; next run in 5 minutes", cause)))
    yield* Effect.forkScoped(Effect.repeat(sweep, Schedule.spaced("5 minutes")))
  })
)
