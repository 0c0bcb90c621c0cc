import { SqlClient, SqlSchema } from "effect/sql"
import { Conflict, Tenant } from "@portfolio/domain"
import { TenantRepository } from "../../ports/TenantRepository.js"
import { DateTime, Effect, Layer, Option, Schema } from "effect"
import { TenantRow } from "./Rows.js"
import { isUniqueViolation } from "@portfolio/platform/sql"

export const TenantRepositoryPg = Layer.effect(
  TenantRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const findOne = (where: "id" | "slug") =>
      SqlSchema.findOneOption({
        Request: Schema.String,
        Result: TenantRow,
        execute: (value) => sql`SELECT id, slug, created_at FROM provisioning.tenants WHERE ${sql(where)} = ${value}`
      })
    const bySlug = findOne("slug")
    const byId = findOne("id")
    const toTenant = Option.map((row: typeof TenantRow.Type) => new Tenant(row))
    return TenantRepository.of({
      insert: (tenant) =>
        sql`INSERT INTO provisioning.tenants (id, slug, created_at) VALUES (${tenant.id}, ${tenant.slug}, ${DateTime.toDate(tenant.createdAt)})`.pipe(
          Effect.asVoid,
          Effect.catchTag("SqlError", (error) =>
            isUniqueViolation(error, "tenants_slug_key")
              ? Effect.fail(new Conflict({ detail: `A tenant with the slug '${tenant.slug}' already exists.` }))
              : Effect.die(error))
        ),
      findBySlug: (slug) => bySlug(slug).pipe(Effect.map(toTenant), Effect.orDie),
      findById: (id) => byId(id).pipe(Effect.map(toTenant), Effect.orDie)
    })
  })
)
