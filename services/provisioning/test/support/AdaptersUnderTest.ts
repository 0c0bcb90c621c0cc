import { SqlClient, SqlSchema } from "effect/sql"
import { MemberRemoved, Tenant } from "@portfolio/domain"
import { newId } from "@portfolio/platform/ids"
import { type SecurityLog } from "@portfolio/platform/security"
import { UnitOfWork } from "@portfolio/platform/sql"
import { Context, DateTime, Deferred, Effect, Fiber, Layer, Option, Ref, Schema } from "effect"
import type { ProvisioningSettings } from "../../src/Config.js"
import type { ProvisioningOutbox } from "../../src/ports/ProvisioningOutbox.js"
import type { IdentityProvider } from "../../src/ports/IdentityProvider.js"
import type { InvitationRepository } from "../../src/ports/InvitationRepository.js"
import type { MailArchive } from "../../src/ports/MailArchive.js"
import type { Mailer } from "../../src/ports/Mailer.js"
import type { MemberRepository } from "../../src/ports/MemberRepository.js"
import type { NotificationLog } from "../../src/ports/NotificationLog.js"
import type { ScimUserRepository } from "../../src/ports/ScimUserRepository.js"
import type { SsoConnectionRepository } from "../../src/ports/SsoConnectionRepository.js"
import type { SsoSignInRepository } from "../../src/ports/SsoSignInRepository.js"
import { TenantRepository } from "../../src/ports/TenantRepository.js"
import { MemoryLayer, MemoryStore } from "./Memory.js"
import { PgAdaptersLayer } from "./PgLayers.js"
import { verifyPassword } from "./ScryptHash.js"

/** What a contract suite reads from an adapter's storage when the port itself does not tell. */
export class StorageProbe extends Context.Service<StorageProbe, {
  /** Every event appended so far, oldest first. */
  readonly outbox: Effect.Effect<ReadonlyArray<MemberRemoved>>
  readonly passwordIs: (subject: string, password: string) => Effect.Effect<boolean>
}>()("test/StorageProbe") {}

const MemoryProbe = Layer.effect(
  StorageProbe,
  Effect.map(MemoryStore, (store) => ({
    outbox: Effect.map(Ref.get(store), (s) => s.outbox),
    passwordIs: (subject: string, password: string) =>
      Effect.map(Ref.get(store), (s) => s.accounts.some((a) => a.subject === subject && a.password === password))
  }))
)

const PgProbe = Layer.effect(
  StorageProbe,
  Effect.map(SqlClient.SqlClient, (sql) => {
    const events = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Schema.Struct({ payload: MemberRemoved }),
      execute: () => sql`SELECT payload FROM provisioning.outbox ORDER BY created_at, id`
    })
    const hashOf = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: Schema.Struct({ passwordHash: Schema.NullOr(Schema.String) }),
      execute: (subject) => sql`SELECT password_hash FROM provisioning.accounts WHERE subject = ${subject}`
    })
    return {
      outbox: events(undefined).pipe(Effect.map((rows) => rows.map((row) => row.payload)), Effect.orDie),
      passwordIs: (subject: string, password: string) =>
        hashOf(subject).pipe(
          Effect.flatMap((row) =>
            Option.match(Option.flatMapNullishOr(row, (r) => r.passwordHash), {
              onNone: () => Effect.succeed(false),
              onSome: (hash) => verifyPassword(password, hash)
            })),
          Effect.orDie
        )
    }
  })
)

export type ProvisioningPorts =
  | TenantRepository
  | SsoConnectionRepository
  | SsoSignInRepository
  | MemberRepository
  | InvitationRepository
  | ScimUserRepository
  | IdentityProvider
  | ProvisioningOutbox
  | NotificationLog
  | SecurityLog
  | Mailer
  | MailArchive
  | UnitOfWork
  | ProvisioningSettings
  | StorageProbe

/**
 * The two sets of adapters every contract suite runs against: the in-memory doubles the unit tests
 * use, and the PostgreSQL ones main.ts serves (on a fresh database per suite).
 */
export const adaptersUnderTest: ReadonlyArray<{ readonly name: string; readonly layer: Layer.Layer<ProvisioningPorts, unknown> }> = [
  { name: "in memory", layer: MemoryProbe.pipe(Layer.provideMerge(MemoryLayer())) },
  { name: "PostgreSQL", layer: PgProbe.pipe(Layer.provideMerge(PgAdaptersLayer())) }
]

/** A fixed instant, so that the cases never depend on the clock. */
export const t0 = DateTime.makeUnsafe("2026-07-01T09:00:00.000Z")

/** A new tenant, stored. */
export const storedTenant = (slug: string) =>
  Effect.gen(function*() {
    const tenant = new Tenant({ id: yield* newId, slug, createdAt: t0 })
    yield* Effect.flatMap(TenantRepository, (tenants) => tenants.insert(tenant))
    return tenant
  })

/**
 * Starts a unit of work that runs `first` and then stays open, holding whatever `first` locked,
 * until `finish` runs `then` inside it and joins it.
 */
export const openUnitOfWork = <A, E, R, B, E2, R2>(first: Effect.Effect<A, E, R>, then: Effect.Effect<B, E2, R2>) =>
  Effect.gen(function*() {
    const unitOfWork = yield* UnitOfWork
    const reached = yield* Deferred.make<void>()
    const gate = yield* Deferred.make<void>()
    const fiber = yield* Effect.forkChild(unitOfWork.run(
      first.pipe(Effect.andThen(Deferred.succeed(reached, undefined)), Effect.andThen(Deferred.await(gate)), Effect.andThen(then))
    ))
    yield* Effect.raceFirst(Deferred.await(reached), Effect.asVoid(Fiber.join(fiber)))
    return { finish: Effect.andThen(Deferred.succeed(gate, undefined), Fiber.join(fiber)) }
  })

/** Whether a fiber is still waiting (for a lock, in these suites) a moment after it was started. */
export const stillWaiting = <A, E>(fiber: Fiber.Fiber<A, E>) =>
  Effect.andThen(Effect.sleep("200 millis"), Effect.sync(() => fiber.pollUnsafe() === undefined))
