import { HttpApi, HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { asProblem, Conflict, InsufficientScope, InvalidRequest, NotFound, Unavailable } from "../Errors.js"
import { CreatePartnerClientRequest, PartnerClient, PartnerClientId, PartnerClientWithSecret, RotatePartnerSecretRequest } from "../PartnerClients.js"
import { PageQuery } from "../Page.js"
import { CreateScimTokenRequest, ScimToken, ScimTokenWithSecret } from "../Scim.js"
import { Email } from "../Provisioning.js"
import { ArbRole, Scope } from "../Role.js"
import { OperatorAuthentication } from "../Security.js"
import { SecurityEvent, TenantSecurityEventsQuery } from "./SecurityEvents.js"
import { InputText, withoutControls } from "../Text.js"

export const PatMaxDays = 366
export const PatDefaultDays = 90

const PatDays = Schema.Int.pipe(Schema.between(1, PatMaxDays))
const UserSub = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255))

export class CreatePatRequest extends Schema.Class<CreatePatRequest>("CreatePatRequest")({
  tenantId: Schema.UUID,
  userSub: Schema.String.pipe(Schema.minLength(1)),
  email: Schema.String,
  role: ArbRole,
  scope: Scope,
  days: Schema.optionalWith(PatDays, { default: () => PatDefaultDays })
}) {}

/** A freshly created PAT: the only time the token itself is ever shown. */
export class CreatedPat extends Schema.Class<CreatedPat>("CreatedPat")({
  id: Schema.UUID,
  token: Schema.String,
  tokenPrefix: Schema.String,
  scope: Scope,
  expiresAt: Schema.DateTimeUtc
}) {}

/** A member's tokens are theirs in one tenant. */
export const PatHolder = Schema.Struct({ tenantId: Schema.UUID, userSub: UserSub })

export class RevokePatRequest extends Schema.Class<RevokePatRequest>("RevokePatRequest")({
  tokenOrId: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  /**
   * Given when a member revokes a token of their own (the console): a token of anyone else then
   * answers the same 404 as an unknown one. Absent for an operator, who may revoke any token.
   */
  holder: Schema.optional(PatHolder)
}) {}

export class RevokedPat extends Schema.Class<RevokedPat>("RevokedPat")({
  id: Schema.UUID,
  revokedAt: Schema.DateTimeUtc
}) {}

/** A token as its holder may see it: never the token, only its first 10 characters. */
export class PatSummary extends Schema.Class<PatSummary>("PatSummary")({
  id: Schema.UUID,
  tokenPrefix: Schema.String,
  scope: Scope,
  createdAt: Schema.DateTimeUtc,
  expiresAt: Schema.DateTimeUtc,
  lastUsedAt: Schema.NullOr(Schema.DateTimeUtc)
}) {}

export const PatJustificationMinLength = 20
export const PatJustificationMaxLength = 2000
export const PatDenialReasonMaxLength = 500

/** Trimmed text of `min` to `max` characters, with a message that says both, on one line or several. */
const trimmedText = (what: string, min: number, max: number, lineBreaks: boolean) =>
  InputText.pipe(
    Schema.compose(Schema.Trim),
    Schema.filter((s) => (s.length >= min && s.length <= max) || `${what} must be ${min} to ${max} characters long once trimmed (got ${s.length})`),
    withoutControls({ lineBreaks })
  )

/** Why the requester needs the token: what it is for, as the approving admin reads it. */
export const PatJustification = trimmedText("the justification", PatJustificationMinLength, PatJustificationMaxLength, true).annotations({
  identifier: "PatJustification",
  description: `Why the token is needed, ${PatJustificationMinLength} to ${PatJustificationMaxLength} characters once trimmed; line breaks and tabs allowed, no other control character.`
})

export const PatDenialReason = trimmedText("the reason", 1, PatDenialReasonMaxLength, false).annotations({
  identifier: "PatDenialReason",
  description: `Why the request is denied, 1 to ${PatDenialReasonMaxLength} characters once trimmed, one line; the requester reads it.`
})

/**
 * `expired`: still undecided when its lifetime ran out (PatRequestLifetimeDays); `closed`: its
 * requester left the tenant while it was pending (no one decided it; `reason` says why). Neither can
 * be decided any more.
 */
export const PatRequestStatus = Schema.Literal("pending", "approved", "denied", "expired", "closed")
export type PatRequestStatus = typeof PatRequestStatus.Type

export const PatRequestId = Schema.UUID.annotations({ identifier: "PatRequestId" })

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
  tenantId: Schema.UUID,
  userSub: UserSub,
  email: Email,
  role: ArbRole,
  scope: Scope,
  days: Schema.optionalWith(PatDays, { default: () => PatDefaultDays }),
  justification: PatJustification
}) {}

/** Who decided a request: a tenant-admin (through the console), or an operator (email null). */
export class PatRequestDecider extends Schema.Class<PatRequestDecider>("PatRequestDecider")({
  userSub: Schema.String,
  email: Schema.NullOr(Schema.String),
  role: Schema.Union(ArbRole, Schema.Literal("operator"))
}) {}

export class PatRequest extends Schema.Class<PatRequest>("PatRequest")({
  id: PatRequestId,
  tenantId: Schema.UUID,
  userSub: Schema.String,
  email: Schema.String,
  role: ArbRole,
  scope: Scope,
  days: Schema.Int,
  justification: Schema.String,
  status: PatRequestStatus,
  createdAt: Schema.DateTimeUtc,
  /** Until when it may be decided: PatRequestLifetimeDays after its filing. */
  expiresAt: Schema.DateTimeUtc,
  decidedAt: Schema.NullOr(Schema.DateTimeUtc),
  decidedBy: Schema.NullOr(PatRequestDecider),
  /** Why it was denied (the approver's words) or closed; null otherwise. */
  reason: Schema.NullOr(Schema.String),
  /** The token minted by the approval; null unless approved. */
  patId: Schema.NullOr(Schema.UUID)
}) {}

/** With `limit` or `cursor`, a page (docs/product-rules.md#lists): a tenant's requests of every state grow for ever. */
export const PatRequestsQuery = Schema.Struct({
  tenantId: Schema.UUID,
  status: Schema.optional(PatRequestStatus),
  userSub: Schema.optional(UserSub),
  ...PageQuery.fields
})

export const PatsQuery = Schema.Struct({ tenantId: Schema.UUID, userSub: UserSub })

/**
 * The tenant member who decides, as the console vouches for them. Absent when an operator decides:
 * the operator is then the subject of the call's signed assertion.
 */
export class PatRequestApprover extends Schema.Class<PatRequestApprover>("PatRequestApprover")({
  tenantId: Schema.UUID,
  userSub: UserSub,
  email: Email,
  role: ArbRole
}) {}

export class ApprovePatRequest extends Schema.Class<ApprovePatRequest>("ApprovePatRequest")({
  approver: Schema.optional(PatRequestApprover)
}) {}

export class DenyPatRequest extends Schema.Class<DenyPatRequest>("DenyPatRequest")({
  approver: Schema.optional(PatRequestApprover),
  reason: PatDenialReason
}) {}

/** An approval's answer: the request as decided, and the token, shown this once to the approver. */
export class ApprovedPatRequest extends Schema.Class<ApprovedPatRequest>("ApprovedPatRequest")({
  request: PatRequest,
  pat: CreatedPat
}) {}

const PatRequestPath = Schema.Struct({ id: PatRequestId })

const tenantPath = Schema.Struct({ tenantId: Schema.UUID })
const clientPath = Schema.Struct({ clientId: PartnerClientId })

/** The gateway's admin API (PATs, PAT requests and partner clients), on its own port, never on the public one. */
export class GatewayAdminGroup extends HttpApiGroup.make("gatewayAdmin")
  .add(HttpApiEndpoint.post("createPat", "/admin/pats").setPayload(CreatePatRequest).addSuccess(CreatedPat, { status: 201 }))
  .add(HttpApiEndpoint.get("listPats", "/admin/pats").setUrlParams(PatsQuery).addSuccess(Schema.Array(PatSummary)))
  .add(
    HttpApiEndpoint.post("revokePat", "/admin/pats/revoke")
      .setPayload(RevokePatRequest)
      .addSuccess(RevokedPat)
      .addError(asProblem(NotFound))
  )
  .add(
    HttpApiEndpoint.post("filePatRequest", "/admin/pat-requests")
      .setPayload(NewPatRequest)
      .addSuccess(PatRequest, { status: 201 })
      // The member has PatRequestPendingMax requests pending already.
      .addError(asProblem(Conflict))
  )
  .add(HttpApiEndpoint.get("listPatRequests", "/admin/pat-requests").setUrlParams(PatRequestsQuery).addSuccess(Schema.Array(PatRequest)))
  .add(
    HttpApiEndpoint.post("approvePatRequest", "/admin/pat-requests/:id/approve")
      .setPath(PatRequestPath)
      .setPayload(ApprovePatRequest)
      .addSuccess(ApprovedPatRequest)
      .addError(asProblem(NotFound))
      .addError(asProblem(InsufficientScope))
      .addError(asProblem(Conflict))
  )
  .add(
    HttpApiEndpoint.post("denyPatRequest", "/admin/pat-requests/:id/deny")
      .setPath(PatRequestPath)
      .setPayload(DenyPatRequest)
      .addSuccess(PatRequest)
      .addError(asProblem(NotFound))
      .addError(asProblem(InsufficientScope))
      .addError(asProblem(Conflict))
  )
  .add(
    HttpApiEndpoint.post("createPartnerClient", "/admin/tenants/:tenantId/partner-clients")
      .setPath(tenantPath)
      .setPayload(CreatePartnerClientRequest)
      .addSuccess(PartnerClientWithSecret, { status: 201 })
      .addError(asProblem(Conflict))
  )
  .add(
    HttpApiEndpoint.get("listPartnerClients", "/admin/tenants/:tenantId/partner-clients")
      .setPath(tenantPath)
      .addSuccess(Schema.Array(PartnerClient))
  )
  .add(
    HttpApiEndpoint.post("rotatePartnerSecret", "/admin/partner-clients/:clientId/rotate-secret")
      .setPath(clientPath)
      .setPayload(RotatePartnerSecretRequest)
      .addSuccess(PartnerClientWithSecret)
      .addError(asProblem(NotFound))
  )
  .add(HttpApiEndpoint.post("disablePartnerClient", "/admin/partner-clients/:clientId/disable").setPath(clientPath).addSuccess(PartnerClient).addError(asProblem(NotFound)))
  .add(HttpApiEndpoint.post("enablePartnerClient", "/admin/partner-clients/:clientId/enable").setPath(clientPath).addSuccess(PartnerClient).addError(asProblem(NotFound)))
  .add(
    // At most ScimTokensPerTenantMax active per tenant: 409 beyond.
    HttpApiEndpoint.post("createScimToken", "/admin/tenants/:tenantId/scim-tokens")
      .setPath(tenantPath)
      .setPayload(CreateScimTokenRequest)
      .addSuccess(ScimTokenWithSecret, { status: 201 })
      .addError(asProblem(Conflict))
  )
  .add(
    // Active ones first, then revoked ones, newest first in each.
    HttpApiEndpoint.get("listScimTokens", "/admin/tenants/:tenantId/scim-tokens")
      .setPath(tenantPath)
      .addSuccess(Schema.Array(ScimToken))
  )
  .add(
    HttpApiEndpoint.post("revokeScimToken", "/admin/tenants/:tenantId/scim-tokens/:id/revoke")
      .setPath(Schema.Struct({ tenantId: Schema.UUID, id: Schema.UUID }))
      .addSuccess(ScimToken)
      .addError(asProblem(NotFound))
  )
  .add(
    // What operators did here (the console records what it does itself): the console reads a
    // tenant's entries beside its own, newest first. Not `.../security-events`, provisioning's: a
    // route names one service (libs/platform/src/security/AssertionAudience.ts).
    HttpApiEndpoint.get("listGatewaySecurityEvents", "/admin/tenants/:tenantId/gateway-security-events")
      .setPath(tenantPath)
      .setUrlParams(TenantSecurityEventsQuery)
      .addSuccess(Schema.Array(SecurityEvent))
  )
  .middleware(OperatorAuthentication) {}

export class GatewayAdminApi extends HttpApi.make("gatewayAdmin")
  .add(GatewayAdminGroup)
  .addError(asProblem(InvalidRequest))
  .addError(asProblem(Unavailable)) {}
