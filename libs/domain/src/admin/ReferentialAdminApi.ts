import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { Application, ApplicationCode, ApplicationInput } from "../Application.js"
import { BusinessFunction, FunctionId, FunctionInput } from "../BusinessFunction.js"
import { Das, DasId, DasInput } from "../Das.js"
import { asProblem, Conflict, InvalidRegulation, InvalidRequest, NotFound } from "../Errors.js"
import { OperatorAuthentication } from "../Security.js"

const TenantPath = { tenantId: Schema.UUID }
const FunctionPath = Schema.Struct({ ...TenantPath, id: FunctionId })

export class DemoSeedRequest extends Schema.Class<DemoSeedRequest>("DemoSeedRequest")({
  applications: Schema.Int.pipe(Schema.between(0, 100_000)),
  functions: Schema.Int.pipe(Schema.between(0, 100_000)),
  maxDepth: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 12)), { default: () => 6 }),
  seed: Schema.optionalWith(Schema.Int, { default: () => 42 })
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
    HttpApiEndpoint.put("putApplication", "/admin/tenants/:tenantId/applications/:code")
      .setPath(Schema.Struct({ ...TenantPath, code: ApplicationCode }))
      .setPayload(ApplicationInput)
      .addSuccess(Application)
      .addError(asProblem(InvalidRegulation))
      .addError(asProblem(NotFound))
      .addError(asProblem(Conflict))
  )
  .add(
    HttpApiEndpoint.post("createFunction", "/admin/tenants/:tenantId/functions")
      .setPath(Schema.Struct(TenantPath))
      .setPayload(FunctionInput)
      .addSuccess(BusinessFunction, { status: 201 })
      .addError(asProblem(NotFound))
      .addError(asProblem(Conflict))
  )
  .add(
    HttpApiEndpoint.put("updateFunction", "/admin/tenants/:tenantId/functions/:id")
      .setPath(FunctionPath)
      .setPayload(FunctionInput)
      .addSuccess(BusinessFunction)
      .addError(asProblem(NotFound))
      .addError(asProblem(Conflict))
  )
  .add(
    HttpApiEndpoint.post("moveFunction", "/admin/tenants/:tenantId/functions/:id/move")
      .setPath(FunctionPath)
      .setPayload(MoveFunctionRequest)
      .addSuccess(BusinessFunction)
      .addError(asProblem(NotFound))
      .addError(asProblem(Conflict))
  )
  .add(
    HttpApiEndpoint.del("deleteFunction", "/admin/tenants/:tenantId/functions/:id")
      .setPath(FunctionPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(asProblem(NotFound))
      .addError(asProblem(Conflict))
  )
  .add(
    HttpApiEndpoint.put("linkApplication", "/admin/tenants/:tenantId/functions/:id/applications/:code")
      .setPath(Schema.Struct({ ...TenantPath, id: FunctionId, code: ApplicationCode }))
      .addSuccess(HttpApiSchema.NoContent)
      .addError(asProblem(NotFound))
  )
  .add(
    HttpApiEndpoint.del("unlinkApplication", "/admin/tenants/:tenantId/functions/:id/applications/:code")
      .setPath(Schema.Struct({ ...TenantPath, id: FunctionId, code: ApplicationCode }))
      .addSuccess(HttpApiSchema.NoContent)
      .addError(asProblem(NotFound))
  )
  .add(
    HttpApiEndpoint.post("seedDemo", "/admin/tenants/:tenantId/demo-seed")
      .setPath(Schema.Struct(TenantPath))
      .setPayload(DemoSeedRequest)
      .addSuccess(DemoSeedResult)
      .addError(asProblem(Conflict))
  )
  .add(
    HttpApiEndpoint.post("createDas", "/admin/tenants/:tenantId/das")
      .setPath(Schema.Struct(TenantPath))
      .setPayload(DasInput)
      .addSuccess(Das, { status: 201 })
      .addError(asProblem(NotFound))
  )
  .add(
    HttpApiEndpoint.post("submitDas", "/admin/tenants/:tenantId/das/:id/submit")
      .setPath(Schema.Struct({ ...TenantPath, id: DasId }))
      .addSuccess(Das)
      .addError(asProblem(NotFound))
      .addError(asProblem(Conflict))
  )
  .middleware(OperatorAuthentication) {}

export class ReferentialAdminApi extends HttpApi.make("referentialAdmin")
  .add(ReferentialAdminGroup)
  .addError(asProblem(InvalidRequest)) {}
