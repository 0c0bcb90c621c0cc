import { Context, type Effect, type Option } from "effect"
import type { Conflict, Tenant } from "@portfolio/domain"

/** Where tenants are kept. */
export interface TenantRepositoryShape {
  /** Fails with `Conflict` when a tenant already has that slug. */
  readonly insert: (tenant: Tenant) => Effect.Effect<void, Conflict>
  readonly findBySlug: (slug: string) => Effect.Effect<Option.Option<Tenant>>
  readonly findById: (id: string) => Effect.Effect<Option.Option<Tenant>>
}

export class TenantRepository extends Context.Service<
  TenantRepository,
  TenantRepositoryShape
>()("@portfolio/provisioning/TenantRepository") {}
