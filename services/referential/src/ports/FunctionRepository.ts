import { Context, type Effect, type Option, type Stream } from "effect"
import type { KeysetRequest } from "@portfolio/platform/http"
import type {
  FunctionFields,
  FunctionLink,
  LocatedFunction,
  PlacedFunction
} from "../domain/FunctionRecord.js"
import type { FunctionCounts } from "../domain/ReferentialCounts.js"

/**
 * Storage of a tenant's business functions and their links to applications. Every method is
 * scoped to one tenant.
 */
export interface FunctionRepositoryShape {
  /**
   * Every function of the tenant once, in tree order (depth first, a function before its children, siblings by code: domain/FunctionForest.ts, `comparePaths`),
   * with its level and its applications' codes, in batches as they are read, all as of one moment:
   * the forest is never whole in the caller's memory. The walk ends early when its reader stops.
   */
  readonly walk: (tenantId: string) => Stream.Stream<ReadonlyArray<PlacedFunction>>
  readonly find: (tenantId: string, id: string) => Effect.Effect<Option.Option<LocatedFunction>>
  readonly findByCode: (tenantId: string, code: string) => Effect.Effect<Option.Option<FunctionFields>>
  /**
   * Case-insensitive substring match on code, name or description; sorted by code. With `page`,
   * the first `page.limit` of those whose code sorts after `page.after`, as in `listByApplication`.
   */
  readonly search: (tenantId: string, text: string, page?: KeysetRequest<string>) => Effect.Effect<ReadonlyArray<LocatedFunction>>
  /** Functions linked to the application, sorted by code. */
  readonly listByApplication: (
    tenantId: string,
    applicationCode: string,
    page?: KeysetRequest<string>
  ) => Effect.Effect<ReadonlyArray<LocatedFunction>>
  /** Ids of the function and of every ancestor above it. */
  readonly selfAndAncestorIds: (tenantId: string, id: string) => Effect.Effect<ReadonlyArray<string>>
  readonly hasChildren: (tenantId: string, id: string) => Effect.Effect<boolean>
  readonly count: (tenantId: string) => Effect.Effect<number>
  readonly insert: (tenantId: string, fields: FunctionFields) => Effect.Effect<void>
  readonly update: (tenantId: string, fields: FunctionFields) => Effect.Effect<void>
  /** Removes the function and its links. */
  readonly remove: (tenantId: string, id: string) => Effect.Effect<void>
  /** Idempotent: linking twice keeps one link. */
  readonly link: (tenantId: string, link: FunctionLink) => Effect.Effect<void>
  /** Idempotent: unlinking a missing link changes nothing. */
  readonly unlink: (tenantId: string, link: FunctionLink) => Effect.Effect<void>
  /** Bulk insert; parents come before their children, here or in an earlier call. */
  readonly insertMany: (tenantId: string, functions: ReadonlyArray<FunctionFields>) => Effect.Effect<void>
  /** Bulk insert of new links, between functions and applications that exist. */
  readonly insertLinks: (tenantId: string, links: ReadonlyArray<FunctionLink>) => Effect.Effect<void>
  /**
   * After a bulk load has committed: brings what the storage plans its reads with up to date (its
   * statistics, its indexes' pending entries), for every tenant's rows.
   */
  readonly settleBulkLoad: Effect.Effect<void>
  /** The statistics' counting of functions and links (applications counted apart: ApplicationRepository). */
  readonly counts: (tenantId: string) => Effect.Effect<FunctionCounts>
}

export class FunctionRepository extends Context.Service<
  FunctionRepository,
  FunctionRepositoryShape
>()("@portfolio/referential/FunctionRepository") {}
