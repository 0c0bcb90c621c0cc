/**
 * What happens to a delivery and its subscription after one attempt (docs/product-rules.md#webhooks).
 * Pure: the use case applies the outcome in one transaction.
 */

/** Any 2xx is a success; a 3xx (redirects are not followed), every other status and no answer are failures. */
export const isSuccess = (status: number | undefined) => status !== undefined && status >= 200 && status < 300

export type NextStep =
  | { readonly _tag: "Succeeded" }
  | { readonly _tag: "RetryAfter"; readonly delayMs: number }
  | { readonly _tag: "Exhausted" }

/**
 * After the `roundAttempt`-th attempt of the current round (1 for the first POST; a redelivery
 * starts a new round) failed: the next delay of the schedule, or the end once every delay was
 * used, which makes at most `schedule.length + 1` POSTs per round.
 */
export const nextStep = (succeeded: boolean, roundAttempt: number, schedule: ReadonlyArray<number>): NextStep => {
  if (succeeded) return { _tag: "Succeeded" }
  const delayMs = schedule[roundAttempt - 1]
  return delayMs === undefined ? { _tag: "Exhausted" } : { _tag: "RetryAfter", delayMs }
}

/**
 * Disabled at the `threshold`-th consecutive failure (the count the attempt left, read in the
 * statement that incremented it), or at the next failure when the threshold was lowered below a
 * count already reached; concurrent attempts past it disable it once (SubscriptionRepository.disableForFailures).
 */
export const disablesAt = (consecutiveFailures: number, threshold: number) => consecutiveFailures >= threshold


/**
 * How long a retry's wake-up, handled at `now`, must still wait for its time `at` (epoch ms): any
 * wait at all goes back to the broker, since a delivery claimed before its time is refused and the
 * retry would be left to the sweeper.
 */
export const wakeupWaitMs = (at: number, now: number) => Math.max(0, at - now)
