import { FreshPgLive } from "@portfolio/platform/testing/FreshDatabase"
import { Layer } from "effect"
import { ReferentialMigrationsLive } from "../../src/adapters/postgres/Migrations.js"
import { ReferentialPg } from "../../src/adapters/postgres/ReferentialPg.js"

/** The referential's PostgreSQL ports on a fresh, migrated database, with its SqlClient. */
export const FreshReferentialPg = ReferentialPg.pipe(
  Layer.provideMerge(ReferentialMigrationsLive),
  Layer.provideMerge(FreshPgLive("it_ref"))
)
