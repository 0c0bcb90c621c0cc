import { FreshPgLive } from "@portfolio/platform/testing"
import { Layer } from "effect"
import { MigrationsLive } from "../../src/adapters/postgres/Migrations.js"
import { PgAdaptersLive } from "../../src/adapters/postgres/PgAdapters.js"

/** The referential's PostgreSQL ports on a fresh, migrated database, with its SqlClient. */
export const FreshReferentialPg = PgAdaptersLive.pipe(
  Layer.provideMerge(MigrationsLive),
  Layer.provideMerge(FreshPgLive("it_ref"))
)
