import { Unavailable } from "@portfolio/domain"
import { Context, DateTime, Effect, Layer, Option, Ref } from "effect"
import { PartnerClientRecord } from "../../src/domain/PartnerClient.js"
import { ClientIdTaken, PartnerClientRepository, PartnerNameTaken } from "../../src/ports/PartnerClientRepository.js"

/**
 * The PartnerClientRepository port in memory, held to the same contract as the PostgreSQL adapter
 * (PartnerClientRepository.contract.test.ts), with a switch that makes it fail as an unreachable
 * database would.
 */
export class PartnerClientRepositoryMemory extends Context.Service<PartnerClientRepositoryMemory>()("test/PartnerClientRepositoryMemory", {
  make: Effect.gen(function*() {
    const records = yield* Ref.make(new Map<string, PartnerClientRecord>())
    const down = yield* Ref.make(false)
    const guard = Effect.flatMap(Ref.get(down), (isDown) =>
      isDown ? Effect.fail(new Unavailable({ detail: "The partner client store is unavailable; retry shortly." })) : Effect.void)
    const update = (clientId: string, change: (record: PartnerClientRecord) => PartnerClientRecord) =>
      Effect.andThen(
        guard,
        Ref.modify(records, (m) => {
          const found = m.get(clientId)
          if (found === undefined) return [Option.none(), m]
          const next = change(found)
          return [Option.some(next), new Map(m).set(clientId, next)]
        })
      )
    const store = PartnerClientRepository.of({
      insert: (record) =>
        Effect.andThen(
          guard,
          Effect.flatten(Ref.modify(records, (m): readonly [Effect.Effect<void, PartnerNameTaken | ClientIdTaken>, Map<string, PartnerClientRecord>] =>
            [...m.values()].some((r) => r.tenantId === record.tenantId && r.name === record.name)
              ? [Effect.fail(new PartnerNameTaken({ name: record.name })), m]
              : m.has(record.clientId)
              ? [Effect.fail(new ClientIdTaken({ clientId: record.clientId })), m]
              : [Effect.void, new Map(m).set(record.clientId, record)]))
        ),
      find: (clientId) => Effect.andThen(guard, Effect.map(Ref.get(records), (m) => Option.fromNullishOr(m.get(clientId)))),
      listByTenant: (tenantId) =>
        Effect.andThen(
          guard,
          Effect.map(Ref.get(records), (m) =>
            [...m.values()]
              .filter((r) => r.tenantId === tenantId)
              .sort((a, b) => DateTime.toEpochMillis(a.createdAt) - DateTime.toEpochMillis(b.createdAt) || a.clientId.localeCompare(b.clientId)))
        ),
      changeSecret: (clientId, change) =>
        update(clientId, (r) =>
          new PartnerClientRecord({
            ...r,
            secretHash: change.secretHash,
            previousSecretHash: change.previous?.secretHash ?? null,
            previousSecretExpiresAt: change.previous?.expiresAt ?? null,
            updatedAt: change.at
          })),
      setDisabled: (clientId, at, updatedAt) =>
        update(clientId, (r) => new PartnerClientRecord({ ...r, disabledAt: at === null ? null : r.disabledAt ?? at, updatedAt }))
    })
    return {
      store,
      setDown: (isDown: boolean) => Ref.set(down, isDown),
      /** What a unit of work restores when it fails (UnitOfWorkMemory). */
      snapshot: Effect.map(Ref.get(records), (m) => Ref.set(records, m))
    }
  })
}) {
  static readonly layer = Layer.provideMerge(
    Layer.effect(PartnerClientRepository, Effect.map(PartnerClientRepositoryMemory, (m) => m.store)),
    Layer.effect(PartnerClientRepositoryMemory, PartnerClientRepositoryMemory.make)
  )
}
