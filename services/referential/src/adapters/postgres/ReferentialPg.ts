import { Layer } from "effect"
import { ApplicationRepositoryPg } from "./ApplicationRepositoryPg.js"
import { FunctionRepositoryPg } from "./FunctionRepositoryPg.js"
import { ReferentialStorePg } from "./ReferentialStorePg.js"

/** Every port of the referential on PostgreSQL (needs a SqlClient on a migrated schema). */
export const ReferentialPg = Layer.mergeAll(ApplicationRepositoryPg, FunctionRepositoryPg, ReferentialStorePg)
