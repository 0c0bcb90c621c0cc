import { Context, type Effect, type Option } from "effect"
import type { Conflict } from "../../Errors.js"
import type { Tenant } from "../../Provisioning.js"

/** Where tenants are kept. */
export interface TenantRepositoryShape {
  /** Fails with `Conflict` when a tenant already has that slug. */
  readonly insert: (tenant: Tenant) => Effect.Effect<void, Conflict>
  readonly findBySlug: (slug: string) => Effect.Effect<Option.Option<Tenant>>
  readonly findById: (id: string) => Effect.Effect<Option.Option<Tenant>>
}

export class TenantRepository extends Context.Tag("@portfolio/domain/ports/provisioning/TenantRepository")<
  TenantRepository,
  TenantRepositoryShape
>() {}
