import { SqlClient } from "effect/sql"
import { Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { admitAttempt } from "../../domain/SignInRules.js"
import { SignInAttempts } from "../../ports/SignInAttempts.js"

interface Counts {
  readonly emailFailures: number
  readonly latestEmail: Date | null
  readonly addressFailures: number
  readonly latestAddress: Date | null
}

/**
 * Attempts in PostgreSQL, shared by the console's replicas. `begin` holds a transaction-scoped
 * advisory lock on the e-mail while it counts and records, so that parallel attempts on one
 * e-mail decide one after the other, each counting the ones before it.
 */
export const SignInAttemptsPg = Layer.effect(
  SignInAttempts,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return SignInAttempts.of({
      begin: (start, policy) =>
        sql.withTransaction(
          Effect.gen(function*() {
            yield* sql`SELECT pg_advisory_xact_lock(hashtextextended(${`console-sign-in:${start.emailKey}`}, 0))`
            const since = new Date(start.atMs - policy.windowMs)
            const [counts] = yield* sql<Counts>`
              SELECT
                (SELECT count(*)::int FROM console.sign_in_attempts WHERE email_key = ${start.emailKey} AND at > ${since}) AS email_failures,
                (SELECT max(at) FROM console.sign_in_attempts WHERE email_key = ${start.emailKey} AND at > ${since}) AS latest_email,
                (SELECT count(*)::int FROM console.sign_in_attempts WHERE ip = ${start.ip} AND at > ${since}) AS address_failures,
                (SELECT max(at) FROM console.sign_in_attempts WHERE ip = ${start.ip} AND at > ${since}) AS latest_address`
            const admission = admitAttempt(policy, {
              emailFailures: counts!.emailFailures,
              latestEmailFailureMs: counts!.latestEmail?.getTime(),
              addressFailures: counts!.addressFailures,
              latestAddressFailureMs: counts!.latestAddress?.getTime()
            }, start.atMs)
            if (admission._tag === "Locked") return { admission, attemptId: undefined }
            const attemptId = randomUUID()
            yield* sql`INSERT INTO console.sign_in_attempts (id, email_key, ip, at) VALUES (${attemptId}, ${start.emailKey}, ${start.ip}, ${new Date(start.atMs)})`
            return { admission, attemptId }
          })
        ).pipe(Effect.orDie),
      succeeded: (attemptId, emailKey) =>
        sql`DELETE FROM console.sign_in_attempts WHERE id = ${attemptId} OR email_key = ${emailKey}`.pipe(Effect.asVoid, Effect.orDie),
      abandoned: (attemptId) => sql`DELETE FROM console.sign_in_attempts WHERE id = ${attemptId}`.pipe(Effect.asVoid, Effect.orDie)
    })
  })
)
