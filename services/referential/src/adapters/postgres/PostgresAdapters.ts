import { UnitOfWorkPg } from "@portfolio/platform"
import { Layer } from "effect"
import { ApplicationEventsPg } from "./ApplicationEventsPg.js"
import { ApplicationRepositoryPg } from "./ApplicationRepositoryPg.js"
import { FunctionRepositoryPg } from "./FunctionRepositoryPg.js"
import { TenantRevisionsPg } from "./TenantRevisionsPg.js"

/** Every port the referential keeps in PostgreSQL, as main.ts serves them and the integration tests use them. */
export const PostgresAdapters = Layer.mergeAll(ApplicationEventsPg, ApplicationRepositoryPg, FunctionRepositoryPg, TenantRevisionsPg, UnitOfWorkPg)
