import { Effect, Layer, Schedule } from "effect"
import { DispatcherSettings } from "../../Config.js"
import { sweepOverdue } from "../../usecases/Deliveries.js"

/**
 * Every `sweepIntervalMs`, the pending deliveries due for longer than that: whatever the broker
 * lost (a wake-up, a message of a crashed process) is attempted late, never dropped.
 */
export const OverdueSweeperLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const { sweepIntervalMs } = yield* DispatcherSettings
    yield* sweepOverdue(sweepIntervalMs).pipe(
      Effect.tap((count) => (count > 0 ? Effect.logInfo("overdue deliveries re-queued", { count }) : Effect.void)),
      Effect.catchCause((cause) => Effect.logWarning("sweep failed; next one soon", cause)),
      Effect.repeat(Schedule.spaced(sweepIntervalMs)),
      Effect.forkScoped
    )
  })
)
