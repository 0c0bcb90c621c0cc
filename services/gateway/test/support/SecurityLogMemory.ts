import { SqlError } from "effect/sql"
import type { SecurityEvent } from "@portfolio/domain"
import { SecurityLog } from "@portfolio/platform/security"
import { Context, DateTime, Effect, Layer, Ref } from "effect"
import type { AdminCall } from "../../src/domain/OperatorActions.js"

/** An operator as the CLI calls, for the cases that act through the use cases themselves. */
export const TestOperatorCall: AdminCall = { subject: "operator:tests", ip: "127.0.0.1", userAgent: "" }

/** What the PostgreSQL adapter dies of when the database refuses the connection. */
const refused = new SqlError.SqlError({
  reason: new SqlError.ConnectionError({ cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }), message: "Failed to execute statement" })
})

/**
 * The SecurityLog port in memory, listing as the PostgreSQL adapter does (newest first, then by
 * id), with the entries for the cases to read and a switch that makes it fail as an unreachable
 * database would.
 */
export class SecurityLogMemory extends Context.Service<SecurityLogMemory>()("test/SecurityLogMemory", {
  make: Effect.gen(function*() {
    const events = yield* Ref.make<ReadonlyArray<SecurityEvent>>([])
    const down = yield* Ref.make(false)
    const guard = Effect.flatMap(Ref.get(down), (isDown) => (isDown ? Effect.die(refused) : Effect.void))
    const store = SecurityLog.of({
      record: (entries) => Effect.andThen(guard, Ref.update(events, (all) => all.concat(entries))),
      list: (tenantId, { limit, since }) =>
        Effect.andThen(
          guard,
          Effect.map(Ref.get(events), (all) =>
            all
              .filter((e) => e.tenantId === tenantId && (since === undefined || !DateTime.isLessThan(e.at, since)))
              .sort((a, b) => DateTime.Order(b.at, a.at) || (a.id < b.id ? -1 : 1))
              .slice(0, limit))
        )
    })
    return {
      store,
      setDown: (value: boolean) => Ref.set(down, value),
      /** Every entry recorded, oldest first. */
      all: Ref.get(events),
      /** What a unit of work restores when it fails (UnitOfWorkMemory). */
      snapshot: Effect.map(Ref.get(events), (all) => Ref.set(events, all))
    }
  })
}) {
  static readonly Default = Layer.effect(SecurityLogMemory, SecurityLogMemory.make)
  static readonly layer = Layer.effect(SecurityLog, Effect.map(SecurityLogMemory, (m) => m.store)).pipe(
    Layer.provideMerge(SecurityLogMemory.Default)
  )
}
