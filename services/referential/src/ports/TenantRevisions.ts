import { Context, type Effect } from "effect"

/**
 * Each tenant's revision: a counter that every write of the tenant's referential moves on, so
 * that equal revisions mean nothing changed in between and readers may reuse what they derived.
 */
export interface TenantRevisionsShape {
  /**
   * Moves the tenant's revision on inside the caller's unit of work: readers see the new value
   * only once the unit commits. It holds the tenant's lock until then, so the tenant's other
   * writers wait for that commit, and their checks see it.
   */
  readonly bump: (tenantId: string) => Effect.Effect<void>
  /** The last committed revision (0 for a tenant never written): one indexed read. */
  readonly current: (tenantId: string) => Effect.Effect<number>
  /** The last committed revisions of several tenants at once; a tenant never written is absent. */
  readonly currentOf: (tenantIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, number>>
}

export class TenantRevisions extends Context.Tag("@portfolio/referential/TenantRevisions")<
  TenantRevisions,
  TenantRevisionsShape
>() {}
