import type { Das } from "@portfolio/domain"
import { Context, type Effect, type Option } from "effect"

/**
 * The DAS records of each tenant. A DAS belongs to an application of its tenant: inserting one for
 * an application the tenant does not have is a defect (the use case checks it first).
 */
export interface DasRepositoryShape {
  readonly find: (tenantId: string, id: string) => Effect.Effect<Option.Option<Das>>
  readonly insert: (tenantId: string, das: Das) => Effect.Effect<void>
  /** Stores the record's new status and submission; the record must exist. */
  readonly update: (tenantId: string, das: Das) => Effect.Effect<void>
}

export class DasRepository extends Context.Service<DasRepository, DasRepositoryShape>()("@portfolio/referential/DasRepository") {}
