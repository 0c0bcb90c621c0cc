import { PatRequest, Unavailable } from "@portfolio/domain"
import { Context, DateTime, Effect, Layer, Option, Ref } from "effect"
import { requestAsOf } from "../../src/domain/PatRequestRules.js"
import { PatRequestRepository } from "../../src/ports/PatRequestRepository.js"

/**
 * The PatRequestRepository port in memory, held to the same contract as the PostgreSQL adapter
 * (PatRequestRepository.contract.test.ts), with a switch that makes it fail as an unreachable database would.
 */
export class PatRequestRepositoryMemory extends Context.Service<PatRequestRepositoryMemory>()("test/PatRequestRepositoryMemory", {
  make: Effect.gen(function*() {
    const requests = yield* Ref.make(new Map<string, PatRequest>())
    const down = yield* Ref.make(false)
    const guard = Effect.flatMap(Ref.get(down), (isDown) =>
      isDown ? Effect.fail(new Unavailable({ detail: "The token store is unavailable; retry shortly." })) : Effect.void)
    const store = PatRequestRepository.of({
      insert: (request) => Effect.andThen(guard, Ref.update(requests, (m) => new Map(m).set(request.id, request))),
      // One unit of work at a time (UnitOfWorkMemory) holds the holder's filings as PostgreSQL's lock does.
      lockPendingOf: (holder, now) =>
        Effect.andThen(
          guard,
          Effect.map(Ref.get(requests), (m) =>
            [...m.values()].filter((r) =>
              r.tenantId === holder.tenantId && r.userSub === holder.userSub && requestAsOf(r, now).status === "pending"
            ).length)
        ),
      find: (id) => Effect.andThen(guard, Effect.map(Ref.get(requests), (m) => Option.fromNullishOr(m.get(id)))),
      list: (filter) =>
        Effect.andThen(
          guard,
          Effect.map(Ref.get(requests), (m) =>
            [...m.values()]
              .filter((r) =>
                r.tenantId === filter.tenantId &&
                (filter.status === undefined || requestAsOf(r, filter.now).status === filter.status) &&
                (filter.userSub === undefined || r.userSub === filter.userSub)
              )
              .sort((a, b) => DateTime.Order(b.createdAt, a.createdAt) || (a.id < b.id ? -1 : 1))
              .filter((r) => {
                const after = filter.after
                if (after === undefined) return true
                const byTime = DateTime.Order(r.createdAt, after.createdAt)
                return byTime < 0 || (byTime === 0 && r.id > after.id)
              })
              .slice(0, filter.limit ?? Number.POSITIVE_INFINITY))
        ),
      settle: (id, decision) =>
        Effect.andThen(
          guard,
          Ref.modify(requests, (m) => {
            const found = m.get(id)
            if (found === undefined || requestAsOf(found, decision.decidedAt).status !== "pending") return [Option.none(), m]
            const settled = new PatRequest({
              ...found,
              status: decision.status,
              decidedAt: decision.decidedAt,
              decidedBy: decision.decidedBy,
              reason: decision.status === "denied" ? decision.reason : null,
              patId: decision.status === "approved" ? decision.patId : null
            })
            return [Option.some(settled), new Map(m).set(id, settled)]
          })
        ),
      closeHolder: (holder, filedBefore, at, reason) =>
        Effect.andThen(
          guard,
          Ref.modify(requests, (m) => {
            const closed = [...m.values()]
              .filter((r) =>
                r.tenantId === holder.tenantId && r.userSub === holder.userSub && requestAsOf(r, at).status === "pending" &&
                DateTime.isLessThan(r.createdAt, filedBefore)
              )
              .map((r) => new PatRequest({ ...r, status: "closed", decidedAt: at, decidedBy: null, reason, patId: null }))
            const next = new Map(m)
            for (const r of closed) next.set(r.id, r)
            return [closed, next]
          })
        )
    })
    return {
      store,
      setDown: (value: boolean) => Ref.set(down, value),
      /** What a unit of work restores when it fails (UnitOfWorkMemory). */
      snapshot: Effect.map(Ref.get(requests), (m) => Ref.set(requests, m))
    }
  })
}) {
  static readonly layer = Layer.effect(PatRequestRepository, Effect.map(PatRequestRepositoryMemory, (m) => m.store)).pipe(
    Layer.provideMerge(Layer.effect(PatRequestRepositoryMemory, PatRequestRepositoryMemory.make))
  )
}
