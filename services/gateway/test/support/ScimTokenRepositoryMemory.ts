import { Unavailable } from "@portfolio/domain"
import { Context, DateTime, Effect, Layer, Option, Ref } from "effect"
import { ScimTokenRecord } from "../../src/domain/ScimToken.js"
import { ScimTokenRepository } from "../../src/ports/ScimTokenRepository.js"

/**
 * The ScimTokenRepository port in memory, held to the same contract as the PostgreSQL adapter
 * (ScimTokenRepository.contract.test.ts), with a switch that makes it fail as an unreachable
 * database would. Its creation lock is UnitOfWorkMemory's: one unit at a time.
 */
export class ScimTokenRepositoryMemory extends Context.Service<ScimTokenRepositoryMemory>()("test/ScimTokenRepositoryMemory", {
  make: Effect.gen(function*() {
    const records = yield* Ref.make(new Map<string, ScimTokenRecord>())
    const down = yield* Ref.make(false)
    const lookups = yield* Ref.make(0)
    const unavailable = new Unavailable({ detail: "The token store is unavailable; retry shortly." })
    const guard = Effect.flatMap(Ref.get(down), (isDown) => (isDown ? Effect.fail(unavailable) : Effect.void))
    const sameHash = (a: Uint8Array, b: Uint8Array) => Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0
    const newestFirst = (a: ScimTokenRecord, b: ScimTokenRecord) =>
      Number(a.revokedAt !== null) - Number(b.revokedAt !== null) || DateTime.Order(b.createdAt, a.createdAt) || (a.id < b.id ? -1 : 1)
    const store = ScimTokenRepository.of({
      // A second token of the same hash fails as the database's unique constraint makes it fail.
      insert: (record) =>
        Effect.andThen(
          guard,
          Effect.flatten(Ref.modify(records, (m): readonly [Effect.Effect<void, Unavailable>, Map<string, ScimTokenRecord>] =>
            [...m.values()].some((r) => sameHash(r.tokenHash, record.tokenHash) || r.id === record.id)
              ? [Effect.fail(unavailable), m]
              : [Effect.void, new Map(m).set(record.id, record)]))
        ),
      lockActiveOf: (tenantId) =>
        Effect.andThen(guard, Effect.map(Ref.get(records), (m) => [...m.values()].filter((r) => r.tenantId === tenantId && r.revokedAt === null).length)),
      findByHash: (tokenHash) =>
        guard.pipe(
          Effect.andThen(Ref.update(lookups, (n) => n + 1)),
          Effect.andThen(Ref.get(records)),
          Effect.map((m) => Option.fromNullishOr([...m.values()].find((r) => sameHash(r.tokenHash, tokenHash))))
        ),
      listByTenant: (tenantId) =>
        Effect.andThen(guard, Effect.map(Ref.get(records), (m) => [...m.values()].filter((r) => r.tenantId === tenantId).sort(newestFirst))),
      revoke: (tenantId, id, at) =>
        Effect.andThen(
          guard,
          Ref.modify(records, (m) => {
            const found = m.get(id)
            if (found === undefined || found.tenantId !== tenantId) return [Option.none(), m]
            const token = new ScimTokenRecord({ ...found, revokedAt: found.revokedAt ?? at })
            return [Option.some({ token, alreadyRevoked: found.revokedAt !== null }), new Map(m).set(id, token)]
          })
        ),
      markUsed: (id, at) =>
        Effect.andThen(
          guard,
          Ref.update(records, (m) => {
            const found = m.get(id)
            if (found === undefined || (found.lastUsedAt !== null && DateTime.isGreaterThan(found.lastUsedAt, at))) return m
            return new Map(m).set(id, new ScimTokenRecord({ ...found, lastUsedAt: at }))
          })
        )
    })
    return {
      store,
      setDown: (value: boolean) => Ref.set(down, value),
      lookups: Ref.get(lookups),
      get: (id: string) => Effect.map(Ref.get(records), (m) => Option.fromNullishOr(m.get(id))),
      /** What a unit of work restores when it fails (UnitOfWorkMemory). */
      snapshot: Effect.map(Ref.get(records), (m) => Ref.set(records, m))
    }
  })
}) {
  static readonly layer = Layer.effect(ScimTokenRepository, Effect.map(ScimTokenRepositoryMemory, (m) => m.store)).pipe(
    Layer.provideMerge(Layer.effect(ScimTokenRepositoryMemory, ScimTokenRepositoryMemory.make))
  )
}
