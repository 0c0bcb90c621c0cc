import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { Schema } from "effect"
import { asProblem, Conflict, InsufficientScope, NotFound } from "../Errors.js"
import { CreatePartnerClientRequest, PartnerClient, PartnerClientId, PartnerClientWithSecret, RotatePartnerSecretRequest } from "../PartnerClients.js"
import { PageQuery } from "../Page.js"
import { CreateScimTokenRequest, ScimToken, ScimTokenWithSecret } from "../Scim.js"
import { Email } from "../Provisioning.js"
import { ArbRole, Scope } from "../Role.js"
import { GatewayAdminProblems, OperatorAuthentication } from "../Security.js"
import { SecurityEvent, TenantSecurityEventsQuery } from "./SecurityEvents.js"
import { InputText, withoutControls } from "../Text.js"
import { DateTimeUtc, Uuid, withDefault } from "../Wire.js"

export const PatMaxDays = 366
export const PatDefaultDays = 90

const PatDays = Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 1, maximum: PatMaxDays })))
const UserSub = Schema.String.pipe(Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(255)))

export class CreatePatRequest extends Schema.Class<CreatePatRequest>("CreatePatRequest")({
  tenantId: Uuid,
  userSub: Schema.String.pipe(Schema.check(Schema.isMinLength(1))),
  email: Schema.String,
  role: ArbRole,
  scope: Scope,
  days: PatDays.pipe(withDefault(PatDefaultDays))
}) {}

/** A freshly created PAT: the only time the token itself is ever shown. */
export class CreatedPat extends Schema.Class<CreatedPat>("CreatedPat")({
  id: Uuid,
  token: Schema.String,
  tokenPrefix: Schema.String,
  scope: Scope,
  expiresAt: DateTimeUtc
}) {}

/** A member's tokens are theirs in one tenant. */
export const PatHolder = Schema.Struct({ tenantId: Uuid, userSub: UserSub })

export class RevokePatRequest extends Schema.Class<RevokePatRequest>("RevokePatRequest")({
  tokenOrId: Schema.String.pipe(Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(200))),
  /**
   * Given when a member revokes a token of their own (the console): a token of anyone else then
   * answers the same 404 as an unknown one. Absent for an operator, who may revoke any token.
   */
  holder: Schema.optionalKey(PatHolder)
}) {}

export class RevokedPat extends Schema.Class<RevokedPat>("RevokedPat")({
  id: Uuid,
  revokedAt: DateTimeUtc
}) {}

/** A token as its holder may see it: never the token, only its first 10 characters. */
export class PatSummary extends Schema.Class<PatSummary>("PatSummary")({
  id: Uuid,
  tokenPrefix: Schema.String,
  scope: Scope,
  createdAt: DateTimeUtc,
  expiresAt: DateTimeUtc,
  lastUsedAt: Schema.NullOr(DateTimeUtc)
}) {}

export const PatJustificationMinLength = 20
export const PatJustificationMaxLength = 2000
export const PatDenialReasonMaxLength = 500

/** Trimmed text of `min` to `max` characters, with a message that says both, on one line or several. */
const trimmedText = (what: string, min: number, max: number, lineBreaks: boolean) =>
  InputText.pipe(
    Schema.decodeTo(Schema.Trim),
    Schema.check(Schema.makeFilter((s: string) => (s.length >= min && s.length <= max) || `${what} must be ${min} to ${max} characters long once trimmed (got ${s.length})`)),
    withoutControls({ lineBreaks })
  )

/** Why the requester needs the token: what it is for, as the approving admin reads it. */
export const PatJustification = trimmedText("the justification", PatJustificationMinLength, PatJustificationMaxLength, true).annotate({
  identifier: "PatJustification",
  description: `Why the token is needed, ${PatJustificationMinLength} to ${PatJustificationMaxLength} characters once trimmed; line breaks and tabs allowed, no other control character.`
})

export const PatDenialReason = trimmedText("the reason", 1, PatDenialReasonMaxLength, false).annotate({
  identifier: "PatDenialReason",
  description: `Why the request is denied, 1 to ${PatDenialReasonMaxLength} characters once trimmed, one line; the requester reads it.`
})

/**
 * `expired`: still undecided when its lifetime ran out (PatRequestLifetimeDays); `closed`: its
 * requester left the tenant while it was pending (no one decided it; `reason` says why). Neither can
 * be decided any more.
 */
export const PatRequestStatus = Schema.Literals(["pending", "approved", "denied", "expired", "closed"])
export type PatRequestStatus = typeof PatRequestStatus.Type

export const PatRequestId = Uuid.annotate({ identifier: "PatRequestId" })

/**
 * How long a request waits for a decision: an unanswered grant must not stay approvable for ever
 * (the member's need, or their role, has moved on); they file a new one.
 */
export const PatRequestLifetimeDays = 30

/**
 * The most requests a member may have pending (not expired) in a tenant at once; one more is a 409
 * CONFLICT and is not kept (docs/product-rules.md#pat-requests). A token is asked for a purpose (a
 * pipeline, a script), and a member rarely waits on more than one or two at a time; the cap keeps
 * one member from burying everyone else's requests in front of the admins.
 */
export const PatRequestPendingMax = 5

/**
 * A member's request for a PAT, filed by the caller on their behalf (the console for a signed-in
 * member, the CLI for an operator): the caller vouches for the member's userSub, e-mail and role
 * in the tenant, as provisioning holds them.
 */
export class NewPatRequest extends Schema.Class<NewPatRequest>("NewPatRequest")({
  tenantId: Uuid,
  userSub: UserSub,
  email: Email,
  role: ArbRole,
  scope: Scope,
  days: PatDays.pipe(withDefault(PatDefaultDays)),
  justification: PatJustification
}) {}

/** Who decided a request: a tenant-admin (through the console), or an operator (email null). */
export class PatRequestDecider extends Schema.Class<PatRequestDecider>("PatRequestDecider")({
  userSub: Schema.String,
  email: Schema.NullOr(Schema.String),
  role: Schema.Union([ArbRole, Schema.Literal("operator")])
}) {}

export class PatRequest extends Schema.Class<PatRequest>("PatRequest")({
  id: PatRequestId,
  tenantId: Uuid,
  userSub: Schema.String,
  email: Schema.String,
  role: ArbRole,
  scope: Scope,
  days: Schema.Int,
  justification: Schema.String,
  status: PatRequestStatus,
  createdAt: DateTimeUtc,
  /** Until when it may be decided: PatRequestLifetimeDays after its filing. */
  expiresAt: DateTimeUtc,
  decidedAt: Schema.NullOr(DateTimeUtc),
  decidedBy: Schema.NullOr(PatRequestDecider),
  /** Why it was denied (the approver's words) or closed; null otherwise. */
  reason: Schema.NullOr(Schema.String),
  /** The token minted by the approval; null unless approved. */
  patId: Schema.NullOr(Uuid)
}) {}

/** With `limit` or `cursor`, a page (docs/product-rules.md#lists): a tenant's requests of every state grow for ever. */
export const PatRequestsQuery = Schema.Struct({
  tenantId: Uuid,
  status: Schema.optionalKey(PatRequestStatus),
  userSub: Schema.optionalKey(UserSub),
  ...PageQuery.fields
})

export const PatsQuery = Schema.Struct({ tenantId: Uuid, userSub: UserSub })

/**
 * The tenant member who decides, as the console vouches for them. Absent when an operator decides:
 * the operator is then the subject of the call's signed assertion.
 */
export class PatRequestApprover extends Schema.Class<PatRequestApprover>("PatRequestApprover")({
  tenantId: Uuid,
  userSub: UserSub,
  email: Email,
  role: ArbRole
}) {}

export class ApprovePatRequest extends Schema.Class<ApprovePatRequest>("ApprovePatRequest")({
  approver: Schema.optionalKey(PatRequestApprover)
}) {}

export class DenyPatRequest extends Schema.Class<DenyPatRequest>("DenyPatRequest")({
  approver: Schema.optionalKey(PatRequestApprover),
  reason: PatDenialReason
}) {}

/** An approval's answer: the request as decided, and the token, shown this once to the approver. */
export class ApprovedPatRequest extends Schema.Class<ApprovedPatRequest>("ApprovedPatRequest")({
  request: PatRequest,
  pat: CreatedPat
}) {}

const PatRequestPath = Schema.Struct({ id: PatRequestId })

const tenantPath = Schema.Struct({ tenantId: Uuid })
const clientPath = Schema.Struct({ clientId: PartnerClientId })

/** The gateway's admin API (PATs, PAT requests and partner clients), on its own port, never on the public one. */
export class GatewayAdminGroup extends HttpApiGroup.make("gatewayAdmin")
  .add(HttpApiEndpoint.post("createPat", "/admin/pats", {
    payload: CreatePatRequest,
    success: CreatedPat.pipe(HttpApiSchema.status(201))
  }))
  .add(HttpApiEndpoint.get("listPats", "/admin/pats", {
    query: PatsQuery,
    success: Schema.Array(PatSummary)
  }))
  .add(
    HttpApiEndpoint.post("revokePat", "/admin/pats/revoke", {
      payload: RevokePatRequest,
      success: RevokedPat,
      error: asProblem(NotFound)
    })
  )
  .add(
    HttpApiEndpoint.post("filePatRequest", "/admin/pat-requests", {
      payload: NewPatRequest,
      success: PatRequest.pipe(HttpApiSchema.status(201)),
      // The member has PatRequestPendingMax requests pending already.
      error: asProblem(Conflict)
    })
  )
  .add(HttpApiEndpoint.get("listPatRequests", "/admin/pat-requests", {
    query: PatRequestsQuery,
    success: Schema.Array(PatRequest)
  }))
  .add(
    HttpApiEndpoint.post("approvePatRequest", "/admin/pat-requests/:id/approve", {
      params: PatRequestPath,
      payload: ApprovePatRequest,
      success: ApprovedPatRequest,
      error: [asProblem(NotFound), asProblem(InsufficientScope), asProblem(Conflict)]
    })
  )
  .add(
    HttpApiEndpoint.post("denyPatRequest", "/admin/pat-requests/:id/deny", {
      params: PatRequestPath,
      payload: DenyPatRequest,
      success: PatRequest,
      error: [asProblem(NotFound), asProblem(InsufficientScope), asProblem(Conflict)]
    })
  )
  .add(
    HttpApiEndpoint.post("createPartnerClient", "/admin/tenants/:tenantId/partner-clients", {
      params: tenantPath,
      payload: CreatePartnerClientRequest,
      success: PartnerClientWithSecret.pipe(HttpApiSchema.status(201)),
      error: asProblem(Conflict)
    })
  )
  .add(
    HttpApiEndpoint.get("listPartnerClients", "/admin/tenants/:tenantId/partner-clients", {
      params: tenantPath,
      success: Schema.Array(PartnerClient)
    })
  )
  .add(
    HttpApiEndpoint.post("rotatePartnerSecret", "/admin/partner-clients/:clientId/rotate-secret", {
      params: clientPath,
      payload: RotatePartnerSecretRequest,
      success: PartnerClientWithSecret,
      error: asProblem(NotFound)
    })
  )
  .add(HttpApiEndpoint.post("disablePartnerClient", "/admin/partner-clients/:clientId/disable", {
    params: clientPath,
    success: PartnerClient,
    error: asProblem(NotFound)
  }))
  .add(HttpApiEndpoint.post("enablePartnerClient", "/admin/partner-clients/:clientId/enable", {
    params: clientPath,
    success: PartnerClient,
    error: asProblem(NotFound)
  }))
  .add(
    // At most ScimTokensPerTenantMax active per tenant: 409 beyond.
    HttpApiEndpoint.post("createScimToken", "/admin/tenants/:tenantId/scim-tokens", {
      params: tenantPath,
      payload: CreateScimTokenRequest,
      success: ScimTokenWithSecret.pipe(HttpApiSchema.status(201)),
      error: asProblem(Conflict)
    })
  )
  .add(
    // Active ones first, then revoked ones, newest first in each.
    HttpApiEndpoint.get("listScimTokens", "/admin/tenants/:tenantId/scim-tokens", {
      params: tenantPath,
      success: Schema.Array(ScimToken)
    })
  )
  .add(
    HttpApiEndpoint.post("revokeScimToken", "/admin/tenants/:tenantId/scim-tokens/:id/revoke", {
      params: Schema.Struct({ tenantId: Uuid, id: Uuid }),
      success: ScimToken,
      error: asProblem(NotFound)
    })
  )
  .add(
    // What operators did here (the console records what it does itself): the console reads a
    // tenant's entries beside its own, newest first. Not `.../security-events`, provisioning's: a
    // route names one service (libs/platform/src/security/AssertionAudience.ts).
    HttpApiEndpoint.get("listGatewaySecurityEvents", "/admin/tenants/:tenantId/gateway-security-events", {
      params: tenantPath,
      query: TenantSecurityEventsQuery,
      success: Schema.Array(SecurityEvent)
    })
  )
  .middleware(OperatorAuthentication) {}

export class GatewayAdminApi extends HttpApi.make("gatewayAdmin")
  .add(GatewayAdminGroup)
  .middleware(GatewayAdminProblems) {}
