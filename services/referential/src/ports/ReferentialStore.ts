import { Context, type Effect } from "effect"

/**
 * The unit of work of the referential. `write` runs its effect atomically (all of its repository
 * writes commit together or none does), one writer at a time per tenant, and bumps the tenant's
 * revision in the same commit. `revision` is a cheap read of that counter: equal revisions mean
 * an unchanged referential, which lets readers reuse what they derived from it.
 */
export interface ReferentialStoreShape {
  readonly write: <A, E, R>(tenantId: string, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  readonly revision: (tenantId: string) => Effect.Effect<number>
}

export class ReferentialStore extends Context.Tag("@portfolio/referential/ReferentialStore")<
  ReferentialStore,
  ReferentialStoreShape
>() {}
