import { UnitOfWorkPg } from "@portfolio/platform/sql"
import { Layer } from "effect"
import { ApplicationRepositoryPg } from "./ApplicationRepositoryPg.js"
import { DasRepositoryPg } from "./DasRepositoryPg.js"
import { FunctionRepositoryPg } from "./FunctionRepositoryPg.js"
import { ReferentialOutboxPg } from "./ReferentialOutboxPg.js"
import { TenantRevisionsPg } from "./TenantRevisionsPg.js"

/** Every port the referential keeps in PostgreSQL, as main.ts serves them and the integration tests use them. */
export const PgAdaptersLive = Layer.mergeAll(
  ApplicationRepositoryPg,
  DasRepositoryPg,
  FunctionRepositoryPg,
  ReferentialOutboxPg,
  TenantRevisionsPg,
  UnitOfWorkPg
)
