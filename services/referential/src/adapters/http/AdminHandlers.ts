import { HttpApiBuilder } from "@effect/platform"
import { Caller, ReferentialAdminApi } from "@portfolio/domain"
import { OperatorAuthenticationLive } from "@portfolio/platform/security"
import { Effect, Layer } from "effect"
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

const ReferentialAdminLive = HttpApiBuilder.group(ReferentialAdminApi, "referentialAdmin", (handlers) =>
  handlers
    .handle("putApplication", ({ path, payload }) =>
      Effect.flatMap(operator, (subject) => putApplication(path.tenantId, path.code, payload, subject)))
    .handle("createFunction", ({ path, payload }) => createFunction(path.tenantId, payload))
    .handle("updateFunction", ({ path, payload }) => updateFunction(path.tenantId, path.id, payload))
    .handle("moveFunction", ({ path, payload }) => moveFunction(path.tenantId, path.id, payload.parentId))
    .handle("deleteFunction", ({ path }) => deleteFunction(path.tenantId, path.id))
    .handle("linkApplication", ({ path }) => linkApplication(path.tenantId, path.id, path.code))
    .handle("unlinkApplication", ({ path }) => unlinkApplication(path.tenantId, path.id, path.code))
    .handle("seedDemo", ({ path, payload }) => Effect.flatMap(operator, (subject) => seedDemo(path.tenantId, payload, subject)))
    .handle("createDas", ({ path, payload }) => createDas(path.tenantId, payload))
    .handle("submitDas", ({ path }) => Effect.flatMap(operator, (subject) => submitDas(path.tenantId, path.id, subject))))

/** The referential's admin API, for operator assertions only. */
export const AdminApiLive = HttpApiBuilder.api(ReferentialAdminApi).pipe(
  Layer.provide(ReferentialAdminLive),
  Layer.provide(OperatorAuthenticationLive)
)
