import { HttpApi, HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { asProblem, InvalidRequest, NotFound, Unavailable } from "../Errors.js"
import { ArbRole, Scope } from "../Role.js"
import { OperatorAuthentication } from "../Security.js"

export const PatMaxDays = 366
export const PatDefaultDays = 90

export class CreatePatRequest extends Schema.Class<CreatePatRequest>("CreatePatRequest")({
  tenantId: Schema.UUID,
  userSub: Schema.String.pipe(Schema.minLength(1)),
  email: Schema.String,
  role: ArbRole,
  scope: Scope,
  days: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, PatMaxDays)), { default: () => PatDefaultDays })
}) {}

/** A freshly created PAT: the only time the token itself is ever shown. */
export class CreatedPat extends Schema.Class<CreatedPat>("CreatedPat")({
  id: Schema.UUID,
  token: Schema.String,
  tokenPrefix: Schema.String,
  scope: Scope,
  expiresAt: Schema.DateTimeUtc
}) {}

export class RevokePatRequest extends Schema.Class<RevokePatRequest>("RevokePatRequest")({
  tokenOrId: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))
}) {}

export class RevokedPat extends Schema.Class<RevokedPat>("RevokedPat")({
  id: Schema.UUID,
  revokedAt: Schema.DateTimeUtc
}) {}

/** The gateway's admin API (PATs), on its own port, never on the public one. */
export class GatewayAdminGroup extends HttpApiGroup.make("gatewayAdmin")
  .add(HttpApiEndpoint.post("createPat", "/admin/pats").setPayload(CreatePatRequest).addSuccess(CreatedPat, { status: 201 }))
  .add(
    HttpApiEndpoint.post("revokePat", "/admin/pats/revoke")
      .setPayload(RevokePatRequest)
      .addSuccess(RevokedPat)
      .addError(asProblem(NotFound))
  )
  .middleware(OperatorAuthentication) {}

export class GatewayAdminApi extends HttpApi.make("gatewayAdmin")
  .add(GatewayAdminGroup)
  .addError(asProblem(InvalidRequest))
  .addError(asProblem(Unavailable)) {}
