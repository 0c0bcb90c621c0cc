import { Context, Schema } from "effect"
import { ArbRole, Scope } from "./Role.js"

/**
 * Who is calling, as the gateway established it and asserted it to the services with a signed
 * internal assertion. Services never read identity from anything else.
 */
export class CallerIdentity extends Schema.Class<CallerIdentity>("CallerIdentity")({
  tenantId: Schema.UUID,
  subject: Schema.String,
  role: Schema.Union(ArbRole, Schema.Literal("operator")),
  scope: Schema.Union(Scope, Schema.Literal("admin"))
}) {}

export class Caller extends Context.Tag("@portfolio/domain/Caller")<Caller, CallerIdentity>() {}
