import { Context, type Effect } from "effect"

/**
 * The parts of a tenant's referential that a public read may depend on, each moved by the writes
 * that can change it, so that a write of one leaves what was derived from the other reusable:
 * at 10,000 applications and 25,000 functions, renaming an application must not rebuild the
 * function tree (megabytes, over a second), which holds nothing of an application but its code.
 *
 * - `applications`: the applications' rows (an application's view, the application list, and the
 *   names, parents and criticalities that posi and the statistics show).
 * - `functions`: the business functions and their links to applications (the tree, the flat
 *   list, posi, the statistics, an application's functions). A link names an application by its
 *   code, which never changes, and no write deletes an application, so only a write of functions
 *   or links changes a link.
 *
 * Which write moves which, and which read depends on which: docs/architecture.md#the-read-path.
 */
export const Scopes = ["applications", "functions"] as const
export type Scope = (typeof Scopes)[number]

/**
 * For each scope, the tenant's revision at which a write last moved it (0: never). All of them
 * come from one counter per tenant, so the greatest over the scopes a read depends on is itself a
 * revision, which stays the same exactly while none of those scopes moves.
 */
export type ScopeRevisions = Readonly<Record<Scope, number>>
export const NeverWritten: ScopeRevisions = { applications: 0, functions: 0 }

/** The revision of what a read depending on `scopes` answers: equal values mean it has not changed. */
export const revisionOf = (revisions: ScopeRevisions, scopes: ReadonlyArray<Scope>): number =>
  scopes.reduce((greatest, scope) => Math.max(greatest, revisions[scope]), 0)

/**
 * Each tenant's revisions: a counter that every write that changes the tenant's referential moves
 * on, and per scope the value it had when that scope last moved, so that readers may reuse what
 * they derived from the scopes that did not move.
 */
export interface TenantRevisionsShape {
  /**
   * Takes the tenant's lock inside the caller's unit of work, until it ends: the tenant's other
   * writers wait for its commit, and their checks (made after their own `lock`) see it. Taken
   * whether or not the unit then writes anything: a write that finds nothing to change must still
   * have looked at the previous writer's commit.
   */
  readonly lock: (tenantId: string) => Effect.Effect<void>
  /**
   * Moves the tenant's revision on and `scopes` with it, inside the caller's unit of work:
   * readers see the new values only once the unit commits. Takes the tenant's lock if the unit
   * does not hold it yet. Nothing moves for no scope.
   */
  readonly moved: (tenantId: string, scopes: ReadonlyArray<Scope>) => Effect.Effect<void>
  /** The last committed revisions (all 0 for a tenant never written): one indexed read. */
  readonly current: (tenantId: string) => Effect.Effect<ScopeRevisions>
  /** The last committed revisions of several tenants at once; a tenant never written is absent. */
  readonly currentOf: (tenantIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, ScopeRevisions>>
}

export class TenantRevisions extends Context.Service<
  TenantRevisions,
  TenantRevisionsShape
>()("@portfolio/referential/TenantRevisions") {}
