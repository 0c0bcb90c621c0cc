import { FreshPgLive } from "@portfolio/platform/testing/FreshDatabase"
import { Layer } from "effect"
import { ReferentialMigrationsLive } from "../../src/adapters/postgres/Migrations.js"
import { PostgresAdapters } from "../../src/adapters/postgres/PostgresAdapters.js"

/** The referential's PostgreSQL ports on a fresh, migrated database, with its SqlClient. */
export const FreshReferentialPg = PostgresAdapters.pipe(
  Layer.provideMerge(ReferentialMigrationsLive),
  Layer.provideMerge(FreshPgLive("it_ref"))
)
