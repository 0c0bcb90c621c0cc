import { HttpApiBuilder } from "effect/http-api"
import { Caller, ReferentialAdminApi } from "@portfolio/domain"
import { Effect } from "effect"
import {
  createFunction,
  deleteFunction,
  linkApplication,
  moveFunction,
  unlinkApplication,
  updateFunction
} from "../../usecases/FunctionCommands.js"
import { createDas, submitDas } from "../../usecases/DasCommands.js"
import { putApplication } from "../../usecases/PutApplication.js"
import { seedDemo } from "../../usecases/SeedDemo.js"

/** The operator's subject is who the change log names as the author of a change, and who submitted a DAS. */
const operator = Effect.map(Caller, (caller) => caller.subject)

/** The handlers of the referential's admin API. */
export const AdminHandlersLive = HttpApiBuilder.group(ReferentialAdminApi, "referentialAdmin", (handlers) =>
  handlers
    .handle("putApplication", ({ params, payload }) =>
      Effect.flatMap(operator, (subject) => putApplication(params.tenantId, params.code, payload, subject)))
    .handle("createFunction", ({ params, payload }) => createFunction(params.tenantId, payload))
    .handle("updateFunction", ({ params, payload }) => updateFunction(params.tenantId, params.id, payload))
    .handle("moveFunction", ({ params, payload }) => moveFunction(params.tenantId, params.id, payload.parentId))
    .handle("deleteFunction", ({ params }) => deleteFunction(params.tenantId, params.id))
    .handle("linkApplication", ({ params }) => linkApplication(params.tenantId, params.id, params.code))
    .handle("unlinkApplication", ({ params }) => unlinkApplication(params.tenantId, params.id, params.code))
    .handle("seedDemo", ({ params, payload }) => Effect.flatMap(operator, (subject) => seedDemo(params.tenantId, payload, subject)))
    .handle("createDas", ({ params, payload }) => createDas(params.tenantId, payload))
    .handle("submitDas", ({ params }) => Effect.flatMap(operator, (subject) => submitDas(params.tenantId, params.id, subject))))
