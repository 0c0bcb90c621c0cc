import { SqlError } from "effect/sql"
import type { SecurityEvent } from "@portfolio/domain"
import { Context, DateTime, Effect, Layer, Ref } from "effect"
import { newestFirst, SecurityLog, type SecurityLogShape } from "../src/security/SecurityLog.js"

/** Where a double keeps its entries, oldest first: a store of its own, or a part of a test's world. */
export interface SecurityLogEntries {
  readonly read: Effect.Effect<ReadonlyArray<SecurityEvent>>
  readonly append: (entries: ReadonlyArray<SecurityEvent>) => Effect.Effect<void>
}

/**
 * The SecurityLog port in memory, over `entries`: it lists as `SecurityLogPg` does (a tenant's
 * entries or with `null` those of no tenant, from `since`, newest first then by id, at most
 * `limit`), as the contract suite checks. For the services whose tests keep the log in a world of
 * their own (snapshotted by their unit of work); the others take `SecurityLogMemory`.
 */
export const securityLogIn = (entries: SecurityLogEntries): SecurityLogShape =>
  SecurityLog.of({
    record: (recorded) => entries.append(Array.isArray(recorded) ? recorded as ReadonlyArray<SecurityEvent> : [recorded as SecurityEvent]),
    list: (tenantId, { limit, since }) =>
      Effect.map(entries.read, (all) =>
        all
          .filter((e) => e.tenantId === tenantId && (since === undefined || !DateTime.isLessThan(e.at, since)))
          .sort(newestFirst)
          .slice(0, limit))
  })

/** What the PostgreSQL adapter dies of when the database refuses the connection. */
const refused = new SqlError.SqlError({
  reason: new SqlError.ConnectionError({ cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }), message: "Failed to execute statement" })
})

/**
 * The SecurityLog port in memory (`securityLogIn` over a store of its own), with the entries for
 * the cases to read, a switch that makes it fail as an unreachable database would, and a snapshot
 * for a unit of work in memory to restore when it fails.
 */
export class SecurityLogMemory extends Context.Service<SecurityLogMemory>()("@portfolio/platform/testing/SecurityLogMemory", {
  make: Effect.gen(function*() {
    const events = yield* Ref.make<ReadonlyArray<SecurityEvent>>([])
    const down = yield* Ref.make(false)
    const guard = Effect.flatMap(Ref.get(down), (isDown) => (isDown ? Effect.die(refused) : Effect.void))
    const store = securityLogIn({
      read: Effect.andThen(guard, Ref.get(events)),
      append: (entries) => Effect.andThen(guard, Ref.update(events, (all) => all.concat(entries)))
    })
    return {
      store,
      setDown: (value: boolean) => Ref.set(down, value),
      /** Every entry recorded, oldest first. */
      all: Ref.get(events),
      /** What a unit of work restores when it fails. */
      snapshot: Effect.map(Ref.get(events), (all) => Ref.set(events, all))
    }
  })
}) {
  /** The port and the double itself, for the cases to read and drive. */
  static readonly layer = Layer.effect(SecurityLog, Effect.map(SecurityLogMemory, (m) => m.store)).pipe(
    Layer.provideMerge(Layer.effect(SecurityLogMemory, SecurityLogMemory.make))
  )
}
