import { SqlClient, SqlSchema } from "effect/sql"
import { IdentityProvider } from "../../ports/IdentityProvider.js"
import { Effect, Layer, Option, Redacted, Schema } from "effect"
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto"

/** scrypt's cost parameters: those of new hashes, and of the check of an account that has none. */
export interface ScryptCost {
  readonly N: number
  readonly r: number
  readonly p: number
}

/** OWASP's scrypt floor, what the service runs with: N = 2^17, r = 8, p = 1 (128 MiB per hash, hence the raised maxmem). */
export const OwaspScryptCost: ScryptCost = { N: 2 ** 17, r: 8, p: 1 }

const keyLength = 32
const maxmem = 256 * 1024 * 1024

/** `scrypt$<N>$<r>$<p>$<salt b64>$<key b64>`: the parameters travel with the hash so they can be raised later. */
const hashPassword = (password: string, { N, p, r }: ScryptCost) =>
  Effect.callback<string, Error>((resume) => {
    const salt = randomBytes(16)
    scrypt(password, salt, keyLength, { N, r, p, maxmem }, (error, key) =>
      resume(error ? Effect.fail(error) : Effect.succeed(`scrypt$${N}$${r}$${p}$${salt.toString("base64")}$${key.toString("base64")}`)))
  })

interface ScryptHash {
  readonly N: number
  readonly r: number
  readonly p: number
  readonly salt: Buffer
  readonly key: Buffer
}

const positiveInteger = (text: string) => (/^[1-9][0-9]{0,9}$/.test(text) ? Number(text) : Number.NaN)

/** A stored hash in the format above, or none when it is not one (nothing then matches it). */
const parseHash = (stored: string): Option.Option<ScryptHash> => {
  const [scheme, cost, blockSize, parallelism, salt, key, ...rest] = stored.split("$")
  if (scheme !== "scrypt" || salt === undefined || key === undefined || rest.length > 0) return Option.none()
  const hash = {
    N: positiveInteger(cost ?? ""),
    r: positiveInteger(blockSize ?? ""),
    p: positiveInteger(parallelism ?? ""),
    salt: Buffer.from(salt, "base64"),
    key: Buffer.from(key, "base64")
  }
  const powerOfTwo = hash.N > 1 && Number.isInteger(Math.log2(hash.N))
  return powerOfTwo && hash.r > 0 && hash.p > 0 && hash.salt.length > 0 && hash.key.length > 0 ? Option.some(hash) : Option.none()
}

/**
 * What a password is checked against when the account has no hash (no such e-mail, or no password
 * set yet): the cost of today's hashes, a salt and a key that no password is known to give. Paying
 * that cost for every check keeps the time of a refusal from telling whether the account exists.
 */
const dummyHash = (cost: ScryptCost): ScryptHash => ({
  ...cost,
  salt: Buffer.from("Mffv+jZcKaE1/rwrhEr9fg==", "base64"),
  key: Buffer.from("TSoCTIeUiTlp8Io9m0obO6af/KLKF3kvqxOeIVxN9Bw=", "base64")
})

/** Whether `password` derives the hash's key, compared in constant time. */
const matches = (password: string, hash: ScryptHash) =>
  Effect.callback<boolean, Error>((resume) => {
    // A hash stored with raised parameters needs the memory they take (128 * N * r bytes), with room.
    const memory = Math.max(maxmem, 2 * 128 * hash.N * hash.r)
    scrypt(password, hash.salt, hash.key.length, { N: hash.N, r: hash.r, p: hash.p, maxmem: memory }, (error, key) =>
      resume(error ? Effect.fail(error) : Effect.succeed(timingSafeEqual(key, hash.key))))
  })

// The subject column is a uuid: anything else names no account, and PostgreSQL would refuse it as input.
const isUuid = (text: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text)

const AccountRow = Schema.Struct({
  subject: Schema.String,
  email: Schema.String,
  hasPassword: Schema.Boolean,
  passwordSetAt: Schema.NullOr(Schema.DateTimeUtcFromDate)
})

/**
 * The built-in identity provider: global accounts in provisioning's own schema, with scrypt hashes
 * of `cost`. The service runs with OwaspScryptCost (PgAdapters.ts, PgAdaptersLive); tests of what
 * is not the cost itself use a cheaper one, since every derivation at the floor takes a second of
 * CPU on a loaded 2-core machine.
 */
export const identityProviderPg = (cost: ScryptCost) =>
  Layer.effect(
    IdentityProvider,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const unset = dummyHash(cost)
      const accountColumns = sql`subject, email, password_hash IS NOT NULL AS has_password, password_set_at`
      const credentialsOf = SqlSchema.findOneOption({
        Request: Schema.String,
        Result: Schema.Struct({
          subject: Schema.String,
          email: Schema.String,
          passwordHash: Schema.NullOr(Schema.String),
          passwordSetAt: Schema.NullOr(Schema.DateTimeUtcFromDate)
        }),
        execute: (email) =>
          sql`SELECT subject, email, password_hash, password_set_at FROM provisioning.accounts WHERE lower(email) = lower(${email})`
      })
      const accountByEmail = SqlSchema.findOneOption({
        Request: Schema.String,
        Result: AccountRow,
        execute: (email) => sql`SELECT ${accountColumns} FROM provisioning.accounts WHERE lower(email) = lower(${email})`
      })
      const accountBySubject = SqlSchema.findOneOption({
        Request: Schema.String,
        Result: AccountRow,
        execute: (subject) => sql`SELECT ${accountColumns} FROM provisioning.accounts WHERE subject = ${subject}`
      })
      return IdentityProvider.of({
        ensureAccount: (email) =>
          Effect.gen(function*() {
            yield* sql`INSERT INTO provisioning.accounts (subject, email) VALUES (gen_random_uuid(), ${email})
                       ON CONFLICT ((lower(email))) DO NOTHING`
            // Inserted just now or by anyone before: there is one.
            return yield* Effect.flatMap(accountByEmail(email), (account) => Effect.fromOption(account))
          }).pipe(Effect.orDie),
        setPassword: (subject, password) =>
          Effect.gen(function*() {
            const hash = yield* hashPassword(Redacted.value(password), cost)
            // now() is when the enclosing transaction began: never after a sign-in that the new
            // password allows, so that the console does not end a session opened with it.
            yield* sql`UPDATE provisioning.accounts SET password_hash = ${hash}, password_set_at = now() WHERE subject = ${subject}`
          }).pipe(Effect.orDie),
        verifyPassword: (email, password) =>
          Effect.gen(function*() {
            const row = yield* credentialsOf(email)
            const stored = Option.flatMap(row, (account) => Option.flatMap(Option.fromNullishOr(account.passwordHash), parseHash))
            // One scrypt derivation whatever was found, so that every refusal costs what a wrong password does.
            const matched = yield* matches(Redacted.value(password), Option.getOrElse(stored, () => unset))
            return Option.isSome(stored) && matched
              ? Option.map(row, (account) => ({ subject: account.subject, email: account.email, hasPassword: true, passwordSetAt: account.passwordSetAt }))
              : Option.none()
          }).pipe(Effect.orDie),
        findAccount: (subject) => (isUuid(subject) ? accountBySubject(subject).pipe(Effect.orDie) : Effect.succeedNone),
        findAccountByEmail: (email) => accountByEmail(email).pipe(Effect.orDie)
      })
    })
  )
