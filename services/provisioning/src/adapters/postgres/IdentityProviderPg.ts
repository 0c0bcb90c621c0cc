import { SqlClient } from "@effect/sql"
import { IdentityProvider } from "../../ports/IdentityProvider.js"
import { Effect, Layer, Redacted, Schema } from "effect"
import { hashPassword } from "./PasswordHash.js"

const AccountRow = Schema.Struct({ subject: Schema.String, email: Schema.String })

/** The built-in identity provider: global accounts in provisioning's own schema. */
export const IdentityProviderPg = Layer.effect(
  IdentityProvider,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return IdentityProvider.of({
      ensureAccount: (email) =>
        Effect.gen(function*() {
          yield* sql`INSERT INTO provisioning.accounts (subject, email) VALUES (gen_random_uuid(), ${email})
                     ON CONFLICT ((lower(email))) DO NOTHING`
          const rows = yield* sql`SELECT subject, email FROM provisioning.accounts WHERE lower(email) = lower(${email})`
          return yield* Schema.decodeUnknown(AccountRow)(rows[0])
        }).pipe(Effect.orDie),
      setPassword: (subject, password) =>
        Effect.gen(function*() {
          const hash = yield* hashPassword(Redacted.value(password))
          yield* sql`UPDATE provisioning.accounts SET password_hash = ${hash}, password_set_at = now() WHERE subject = ${subject}`
        }).pipe(Effect.orDie)
    })
  })
)
