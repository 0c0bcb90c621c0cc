import { PatRecord } from "../../src/domain/PatRecord.js"
import { type Holder, PatRepository } from "../../src/ports/PatRepository.js"
import { Unavailable } from "@portfolio/domain"
import { Context, DateTime, Effect, Layer, Option, Ref } from "effect"

/**
 * The PatRepository port in memory, held to the same contract as the PostgreSQL adapter
 * (PatRepository.contract.test.ts), with a switch that makes it fail as an unreachable database would.
 */
export class PatRepositoryMemory extends Context.Service<PatRepositoryMemory>()("test/PatRepositoryMemory", {
  make: Effect.gen(function*() {
    const records = yield* Ref.make(new Map<string, PatRecord>())
    const down = yield* Ref.make(false)
    const lookups = yield* Ref.make(0)
    const unavailable = new Unavailable({ detail: "The token store is unavailable; retry shortly." })
    const guard = Effect.flatMap(Ref.get(down), (isDown) => (isDown ? Effect.fail(unavailable) : Effect.void))
    const sameHash = (a: Uint8Array, b: Uint8Array) => Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0
    const isHolder = (r: PatRecord, holder: Holder) => r.tenantId === holder.tenantId && r.userSub === holder.userSub
    const store = PatRepository.of({
      // A second token of the same hash fails as the database's unique constraint makes it fail.
      insert: (record) =>
        Effect.andThen(
          guard,
          Effect.flatten(Ref.modify(records, (m): readonly [Effect.Effect<void, Unavailable>, Map<string, PatRecord>] =>
            [...m.values()].some((r) => sameHash(r.tokenHash, record.tokenHash))
              ? [Effect.fail(unavailable), m]
              : [Effect.void, new Map(m).set(record.id, record)]))
        ),
      findByHash: (tokenHash) =>
        guard.pipe(
          Effect.andThen(Ref.update(lookups, (n) => n + 1)),
          Effect.andThen(Ref.get(records)),
          Effect.map((m) => Option.fromNullishOr([...m.values()].find((r) => sameHash(r.tokenHash, tokenHash))))
        ),
      revoke: (selector, at, holder) =>
        Effect.andThen(
          guard,
          Ref.modify(records, (m) => {
            const found = [...m.values()].find((r) => ("id" in selector ? r.id === selector.id : sameHash(r.tokenHash, selector.tokenHash)))
            if (found === undefined || (holder !== undefined && !isHolder(found, holder))) return [Option.none(), m]
            const revoked = new PatRecord({ ...found, revokedAt: found.revokedAt ?? at })
            return [Option.some(revoked), new Map(m).set(found.id, revoked)]
          })
        ),
      listActive: (holder, now) =>
        Effect.andThen(
          guard,
          Effect.map(Ref.get(records), (m) =>
            [...m.values()]
              .filter((r) => isHolder(r, holder) && r.revokedAt === null && DateTime.isGreaterThan(r.expiresAt, now))
              .sort((a, b) => DateTime.Order(b.createdAt, a.createdAt) || (a.id < b.id ? -1 : 1)))
        ),
      markUsed: (id, at) =>
        Effect.andThen(
          guard,
          Ref.update(records, (m) => {
            const found = m.get(id)
            if (found === undefined || (found.lastUsedAt !== null && DateTime.isGreaterThan(found.lastUsedAt, at))) return m
            return new Map(m).set(id, new PatRecord({ ...found, lastUsedAt: at }))
          })
        ),
      revokeHolder: (holder, createdBefore, at) =>
        Effect.andThen(
          guard,
          Ref.modify(records, (m) => {
            const next = new Map(m)
            const ids: Array<string> = []
            for (const r of m.values()) {
              if (r.tenantId !== holder.tenantId || r.userSub !== holder.userSub || r.revokedAt !== null) continue
              if (!DateTime.isLessThan(r.createdAt, createdBefore)) continue
              ids.push(r.id)
              next.set(r.id, new PatRecord({ ...r, revokedAt: at }))
            }
            return [ids, next]
          })
        )
    })
    return {
      store,
      setDown: (value: boolean) => Ref.set(down, value),
      lookups: Ref.get(lookups),
      get: (id: string) => Effect.map(Ref.get(records), (m) => Option.fromNullishOr(m.get(id))),
      all: Effect.map(Ref.get(records), (m) => [...m.values()]),
      /** What a unit of work restores when it fails (UnitOfWorkMemory). */
      snapshot: Effect.map(Ref.get(records), (m) => Ref.set(records, m))
    }
  })
}) {
  static readonly layer = Layer.effect(PatRepository, Effect.map(PatRepositoryMemory, (m) => m.store)).pipe(
    Layer.provideMerge(Layer.effect(PatRepositoryMemory, PatRepositoryMemory.make))
  )
}
