import { SqlClient, SqlSchema } from "@effect/sql"
import { IdentityProvider } from "../../ports/IdentityProvider.js"
import { Effect, Layer, Redacted, Schema } from "effect"
import { randomBytes, scrypt } from "node:crypto"

// OWASP's scrypt floor: N = 2^17, r = 8, p = 1 (128 MiB per hash, hence the raised maxmem).
const N = 2 ** 17
const r = 8
const p = 1
const keyLength = 32
const maxmem = 256 * 1024 * 1024

/** `scrypt$<N>$<r>$<p>$<salt b64>$<key b64>`: the parameters travel with the hash so they can be raised later. */
const hashPassword = (password: string) =>
  Effect.async<string, Error>((resume) => {
    const salt = randomBytes(16)
    scrypt(password, salt, keyLength, { N, r, p, maxmem }, (error, key) =>
      resume(error ? Effect.fail(error) : Effect.succeed(`scrypt$${N}$${r}$${p}$${salt.toString("base64")}$${key.toString("base64")}`)))
  })

const AccountRow = Schema.Struct({ subject: Schema.String, email: Schema.String, hasPassword: Schema.Boolean })

/** The built-in identity provider: global accounts in provisioning's own schema, with scrypt hashes. */
export const IdentityProviderPg = Layer.effect(
  IdentityProvider,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const accountOf = SqlSchema.single({
      Request: Schema.String,
      Result: AccountRow,
      execute: (email) =>
        sql`SELECT subject, email, password_hash IS NOT NULL AS has_password FROM provisioning.accounts WHERE lower(email) = lower(${email})`
    })
    return IdentityProvider.of({
      ensureAccount: (email) =>
        Effect.gen(function*() {
          yield* sql`INSERT INTO provisioning.accounts (subject, email) VALUES (gen_random_uuid(), ${email})
                     ON CONFLICT ((lower(email))) DO NOTHING`
          return yield* accountOf(email)
        }).pipe(Effect.orDie),
      setPassword: (subject, password) =>
        Effect.gen(function*() {
          const hash = yield* hashPassword(Redacted.value(password))
          yield* sql`UPDATE provisioning.accounts SET password_hash = ${hash}, password_set_at = now() WHERE subject = ${subject}`
        }).pipe(Effect.orDie)
    })
  })
)
