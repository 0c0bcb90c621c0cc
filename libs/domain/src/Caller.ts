import { Context, Schema } from "effect"
import { ArbRole, Scope } from "./Role.js"
import { Uuid } from "./Wire.js"

/**
 * Who is calling, as the gateway established it and asserted it to the services with a signed
 * internal assertion. Services never read identity from anything else.
 */
export class CallerIdentity extends Schema.Class<CallerIdentity>("CallerIdentity")({
  tenantId: Uuid,
  subject: Schema.String,
  /**
   * `partner`: a partner client's access token (docs/product-rules.md#partner-clients), never a
   * tenant-admin; `scim`: a tenant's SCIM token (docs/scim.md), admitted on the SCIM endpoints only.
   */
  role: Schema.Union([ArbRole, Schema.Literals(["operator", "partner", "scim"])]),
  scope: Schema.Union([Scope, Schema.Literal("admin")])
}) {}

export class Caller extends Context.Service<Caller, CallerIdentity>()("@portfolio/domain/Caller") {}
