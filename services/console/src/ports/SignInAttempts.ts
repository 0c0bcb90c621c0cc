import { Context, type Effect } from "effect"
import type { Admission, LockoutPolicy } from "../domain/SignInRules.js"

export interface AttemptStart {
  readonly emailKey: string
  readonly ip: string
  readonly atMs: number
}

/**
 * The record of sign-in attempts that the lockout counts. `begin` decides and records in one
 * step (no two attempts decide on the same count), the attempt counting as a failure until it
 * is known to have succeeded.
 */
export interface SignInAttemptsShape {
  readonly begin: (
    start: AttemptStart,
    policy: LockoutPolicy
  ) => Effect.Effect<{ readonly admission: Admission; readonly attemptId: string | undefined }>
  /** The attempt succeeded: it and the e-mail's earlier failures no longer count. */
  readonly succeeded: (attemptId: string, emailKey: string) => Effect.Effect<void>
  /** The attempt could not be checked: it counts for nothing. */
  readonly abandoned: (attemptId: string) => Effect.Effect<void>
}

export class SignInAttempts extends Context.Service<SignInAttempts, SignInAttemptsShape>()("@portfolio/console/SignInAttempts") {}
