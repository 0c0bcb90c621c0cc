import { Context, type Effect, type Option, type Stream } from "effect"
import type { ApplicationFilters, ChangeLogEntry, LinkedApplication } from "@portfolio/domain"
import type { KeysetRequest } from "@portfolio/platform/http"
import type { ApplicationRecord } from "../domain/ApplicationRecord.js"
import type { ApplicationCounts } from "../domain/ReferentialCounts.js"

/**
 * What a link to an application shows of it (posi) depends on: its own revision (its name, parent
 * and criticality) and its parent's (the parent's name). Equal versions, equal objects.
 */
export const linkedVersion = (revision: number, parentRevision: number | null) => `${revision}/${parentRevision ?? "-"}`

/**
 * What `listLinkedChanged` gives: the tenant's write sequence in its snapshot (`WriteSeq`, first),
 * the linked versions of the applications that moved since what the caller holds (`Versions`),
 * then applications as a link shows them, with their versions (`Linked`).
 */
export type ListedLinked =
  | { readonly _tag: "WriteSeq"; readonly writeSeq: number }
  | { readonly _tag: "Versions"; readonly versions: ReadonlyArray<{ readonly code: string; readonly version: string }> }
  | { readonly _tag: "Linked"; readonly applications: ReadonlyArray<{ readonly application: LinkedApplication; readonly version: string }> }

/**
 * What a caller of `listLinkedChanged` holds: every application of the tenant as of the write
 * sequence `writeSeq` (a `WriteSeq` it was given), whether at its linked version (`held`).
 */
export interface HeldLinked {
  readonly writeSeq: number
  readonly held: (code: string, version: string) => boolean
}

/** What `listAllChanged` gives: the list's order, then the records the caller did not hold. */
export type ListedApplications =
  | { readonly _tag: "Order"; readonly order: ReadonlyArray<{ readonly code: string; readonly revision: number }> }
  | { readonly _tag: "Records"; readonly records: ReadonlyArray<ApplicationRecord> }

/**
 * Storage of a tenant's applications and their change log. Every method is scoped to one tenant;
 * nothing of another tenant is ever visible. Writes run inside a use case's `writing`, which
 * makes them atomic.
 */
export interface ApplicationRepositoryShape {
  /**
   * The first `page.limit` of the applications matching every given filter whose code sorts after
   * `page.after`, sorted by code.
   */
  readonly list: (
    tenantId: string,
    filters: ApplicationFilters,
    page: KeysetRequest<string>
  ) => Effect.Effect<ReadonlyArray<ApplicationRecord>>
  /**
   * The whole list against what the caller already holds, all read as of one moment: first the
   * code and revision of every application matching the filters, by code (`Order`), then the
   * records of those `held` does not hold at that revision, in batches of at most `size`
   * (`Records`, in no particular order). An application's revision moves at every write of it,
   * and none is ever deleted: what the caller holds at a revision is what a read would give.
   */
  readonly listAllChanged: (
    tenantId: string,
    filters: ApplicationFilters,
    held: (code: string, revision: number) => boolean,
    size: number
  ) => Stream.Stream<ListedApplications>
  readonly find: (tenantId: string, code: string) => Effect.Effect<Option.Option<ApplicationRecord>>
  /** Whether the tenant has application `code`: a lookup of its key, where `find` reads and decodes the whole record. */
  readonly exists: (tenantId: string, code: string) => Effect.Effect<boolean>
  /** Codes of the parent chain above `code`, nearest first (empty for a root or an unknown code). */
  readonly ancestorCodes: (tenantId: string, code: string) => Effect.Effect<ReadonlyArray<string>>
  readonly count: (tenantId: string) => Effect.Effect<number>
  /**
   * Every application of the tenant as a link to it shows it (posi) against what the caller
   * already holds, all read as of one moment. First the tenant's write sequence in that moment
   * (`WriteSeq`): every write of an application takes a number of it, and a tenant's writes are
   * numbered in the order they commit (adapters/postgres/Migrations.ts, 0008), so the applications
   * not written since a sequence are as they were then. Holding (`holding`): the linked versions of
   * the applications written since `holding.writeSeq`, and of the children of those, whose parent's
   * name may have moved (`Versions`, in no particular order; none when nothing was written); every
   * other application is as the caller holds it. Then those of them `holding.held` does not hold
   * at that version, with it (`Linked`), those `first` names first. Posi's first piece shows only
   * the few hundred `first` names and waits for them. Holding nothing (`holding` undefined), or a
   * sequence below the one held (a database restored under the process: nothing held is to be
   * trusted): no `Versions`, only every application in two batches, the named ones, then the
   * others. Applications are never deleted: what was held stays in the tenant.
   */
  readonly listLinkedChanged: (
    tenantId: string,
    first: ReadonlyArray<string>,
    holding: HeldLinked | undefined
  ) => Stream.Stream<ListedLinked>
  /** The statistics' counting of applications (functions counted apart: FunctionRepository). */
  readonly counts: (tenantId: string) => Effect.Effect<ApplicationCounts>
  readonly insert: (tenantId: string, record: ApplicationRecord) => Effect.Effect<void>
  /**
   * Replaces the application `record` names; `previous` is the record as read in the same write,
   * and a multi-valued field (regulations, role assignments) equal to its value there, in the same
   * order, is not written again.
   */
  readonly update: (tenantId: string, record: ApplicationRecord, previous: ApplicationRecord) => Effect.Effect<void>
  /** Bulk insert; parents come before their children in `records`. */
  readonly insertMany: (tenantId: string, records: ReadonlyArray<ApplicationRecord>) => Effect.Effect<void>
  /** Appends entries in the given order; that order breaks ties between equal `changedAt`. */
  readonly appendChanges: (tenantId: string, entries: ReadonlyArray<ChangeLogEntry>) => Effect.Effect<void>
  /**
   * Newest first: `changedAt` descending, then append order descending. With `after`, only the
   * entries that come after that one in this order. None when the tenant has no application
   * `code`: whether it exists and its entries are read together (one round trip for a read
   * integrators poll).
   */
  readonly listChanges: (
    tenantId: string,
    code: string,
    limit: number,
    after?: ChangePosition
  ) => Effect.Effect<Option.Option<ReadonlyArray<ChangeLogEntry>>>
}

/**
 * Where an entry stands in its application's change log: its time and its id. The append order
 * that breaks ties of time is the storage's own; the entry's id names it.
 */
export interface ChangePosition {
  readonly changedAtMillis: number
  readonly id: string
}

export class ApplicationRepository extends Context.Service<
  ApplicationRepository,
  ApplicationRepositoryShape
>()("@portfolio/referential/ApplicationRepository") {}
