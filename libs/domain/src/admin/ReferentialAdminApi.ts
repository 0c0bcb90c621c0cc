import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { Schema } from "effect"
import { Application, ApplicationCode, ApplicationInput } from "../Application.js"
import { BusinessFunction, FunctionId, FunctionInput } from "../BusinessFunction.js"
import { Das, DasId, DasInput } from "../Das.js"
import { asProblem, Conflict, InvalidRegulation, NotFound } from "../Errors.js"
import { OperatorAuthentication, Problems } from "../Security.js"
import { Uuid, withDefault } from "../Wire.js"

const TenantPath = { tenantId: Uuid }
const FunctionPath = Schema.Struct({ ...TenantPath, id: FunctionId })

export class DemoSeedRequest extends Schema.Class<DemoSeedRequest>("DemoSeedRequest")({
  applications: Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 0, maximum: 100_000 }))),
  functions: Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 0, maximum: 100_000 }))),
  maxDepth: Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 1, maximum: 12 })), withDefault(6)),
  seed: Schema.Int.pipe(withDefault(42))
}) {}

export class DemoSeedResult extends Schema.Class<DemoSeedResult>("DemoSeedResult")({
  applications: Schema.Int,
  functions: Schema.Int,
  links: Schema.Int
}) {}

export class MoveFunctionRequest extends Schema.Class<MoveFunctionRequest>("MoveFunctionRequest")({
  parentId: Schema.NullOr(FunctionId)
}) {}

/**
 * The referential's admin API: writes to the referential, on a port of its own that the gateway
 * never routes. Called by the operator CLI with an operator assertion.
 */
export class ReferentialAdminGroup extends HttpApiGroup.make("referentialAdmin")
  .add(
    HttpApiEndpoint.put("putApplication", "/admin/tenants/:tenantId/applications/:code", {
      params: Schema.Struct({ ...TenantPath, code: ApplicationCode }),
      payload: ApplicationInput,
      success: Application,
      error: [asProblem(InvalidRegulation), asProblem(NotFound), asProblem(Conflict)]
    })
  )
  .add(
    HttpApiEndpoint.post("createFunction", "/admin/tenants/:tenantId/functions", {
      params: Schema.Struct(TenantPath),
      payload: FunctionInput,
      success: BusinessFunction.pipe(HttpApiSchema.status(201)),
      error: [asProblem(NotFound), asProblem(Conflict)]
    })
  )
  .add(
    HttpApiEndpoint.put("updateFunction", "/admin/tenants/:tenantId/functions/:id", {
      params: FunctionPath,
      payload: FunctionInput,
      success: BusinessFunction,
      error: [asProblem(NotFound), asProblem(Conflict)]
    })
  )
  .add(
    HttpApiEndpoint.post("moveFunction", "/admin/tenants/:tenantId/functions/:id/move", {
      params: FunctionPath,
      payload: MoveFunctionRequest,
      success: BusinessFunction,
      error: [asProblem(NotFound), asProblem(Conflict)]
    })
  )
  .add(
    HttpApiEndpoint.delete("deleteFunction", "/admin/tenants/:tenantId/functions/:id", {
      params: FunctionPath,
      success: HttpApiSchema.NoContent,
      error: [asProblem(NotFound), asProblem(Conflict)]
    })
  )
  .add(
    HttpApiEndpoint.put("linkApplication", "/admin/tenants/:tenantId/functions/:id/applications/:code", {
      params: Schema.Struct({ ...TenantPath, id: FunctionId, code: ApplicationCode }),
      success: HttpApiSchema.NoContent,
      error: asProblem(NotFound)
    })
  )
  .add(
    HttpApiEndpoint.delete("unlinkApplication", "/admin/tenants/:tenantId/functions/:id/applications/:code", {
      params: Schema.Struct({ ...TenantPath, id: FunctionId, code: ApplicationCode }),
      success: HttpApiSchema.NoContent,
      error: asProblem(NotFound)
    })
  )
  .add(
    HttpApiEndpoint.post("seedDemo", "/admin/tenants/:tenantId/demo-seed", {
      params: Schema.Struct(TenantPath),
      payload: DemoSeedRequest,
      success: DemoSeedResult,
      error: asProblem(Conflict)
    })
  )
  .add(
    HttpApiEndpoint.post("createDas", "/admin/tenants/:tenantId/das", {
      params: Schema.Struct(TenantPath),
      payload: DasInput,
      success: Das.pipe(HttpApiSchema.status(201)),
      error: asProblem(NotFound)
    })
  )
  .add(
    HttpApiEndpoint.post("submitDas", "/admin/tenants/:tenantId/das/:id/submit", {
      params: Schema.Struct({ ...TenantPath, id: DasId }),
      success: Das,
      error: [asProblem(NotFound), asProblem(Conflict)]
    })
  )
  .middleware(OperatorAuthentication) {}

export class ReferentialAdminApi extends HttpApi.make("referentialAdmin")
  .add(ReferentialAdminGroup)
  .middleware(Problems) {}
