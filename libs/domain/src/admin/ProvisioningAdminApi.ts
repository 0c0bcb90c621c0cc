import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { Schema } from "effect"
import {
  AlreadyInvited,
  asProblem,
  Conflict,
  InvalidInvitationParam,
  InvitationNotPending,
  LastTenantAdmin,
  MemberWasRemoved,
  NotFound,
  Unauthenticated,
  RateLimited,
  Unavailable
} from "../Errors.js"
import { PageQuery } from "../Page.js"
import { Email, Invitation, InvitationRequest, Member, Tenant, TenantSlug, UserSub } from "../Provisioning.js"
import { ArbRole } from "../Role.js"
import { OperatorAuthentication, Problems } from "../Security.js"
import { SsoConnection, SsoConnectionRequest, SsoDomainLookup, SsoDomainTenants, SsoSignInCompletion, SsoSignInStart } from "../Sso.js"
import { SecurityEvent, TenantSecurityEventsQuery } from "./SecurityEvents.js"
import { InputText } from "../Text.js"
import { DateTimeUtc, Uuid, withDefault } from "../Wire.js"

export class CreateTenantRequest extends Schema.Class<CreateTenantRequest>("CreateTenantRequest")({
  slug: TenantSlug,
  adminEmail: Email
}) {}

/** The link mailed to a new tenant's first admin to set a password: the invitation behind it, and its end. */
export class WelcomeLink extends Schema.Class<WelcomeLink>("WelcomeLink")({
  invitationId: Uuid,
  expiresAt: DateTimeUtc
}) {}

export class TenantWithAdmin extends Schema.Class<TenantWithAdmin>("TenantWithAdmin")({
  tenant: Tenant,
  admin: Member,
  /**
   * The welcome link mailed to the admin, whose account had no password; null when it had one (the
   * person can already sign in) and nothing was mailed. Absent in the answer of a provisioning
   * older than the field, which says nothing either way.
   */
  welcome: Schema.optionalKey(Schema.NullOr(WelcomeLink))
}) {}

export class ResendWelcomeRequest extends Schema.Class<ResendWelcomeRequest>("ResendWelcomeRequest")({
  email: Email
}) {}

/** What an OIDC login tells about a person on their first sign-in to a tenant. */
export class SsoMemberRequest extends Schema.Class<SsoMemberRequest>("SsoMemberRequest")({
  userSub: UserSub,
  email: Email,
  arbRole: ArbRole.pipe(withDefault("viewer"))
}) {}

/** A message kept by the local mailer (no SMTP server), with the magic link in its text. */
export class OutboundMail extends Schema.Class<OutboundMail>("OutboundMail")({
  id: Schema.Int,
  to: Schema.String,
  subject: Schema.String,
  text: Schema.String,
  createdAt: DateTimeUtc
}) {}

export const OutboundMailQuery = Schema.Struct({
  to: Schema.optionalKey(Schema.String.pipe(Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(254))))
})

export class TenantMember extends Schema.Class<TenantMember>("TenantMember")({
  tenant: Tenant,
  member: Member
}) {}

// A schema message quotes the value it refused, and a 400 answer carries it: a password's own
// messages name the rule only.
const PasswordCandidate = Schema.String.annotate({ message: "Expected a string" }).pipe(
  Schema.check(Schema.isMinLength(1, { message: "Expected a password of 1 to 256 characters" })),
  Schema.check(Schema.isMaxLength(256, { message: "Expected a password of 1 to 256 characters" }))
)

/** An e-mail and a password typed at the console's sign-in form. */
export class SignInCheckRequest extends Schema.Class<SignInCheckRequest>("SignInCheckRequest")({
  email: Email,
  password: PasswordCandidate
}) {}

/**
 * A person's account in the built-in identity provider and their active memberships, one per
 * tenant, ordered by tenant slug (none when every membership was removed).
 */
export class MemberAccount extends Schema.Class<MemberAccount>("MemberAccount")({
  subject: Schema.String,
  email: Schema.String,
  memberships: Schema.Array(TenantMember),
  /**
   * When the account's password was last set, null while it has none: the console ends a session
   * opened before it. Absent in the answer of a provisioning older than the field, which says
   * nothing either way.
   */
  passwordSetAt: Schema.optionalKey(Schema.NullOr(DateTimeUtc)),
  /**
   * The tenants of these memberships whose single sign-on is required and for which this person is
   * no break-glass account: a session opened with a password may not act in them, only one opened
   * through that tenant's provider. Absent in the answer of a provisioning older than the field.
   */
  ssoOnlyTenantIds: Schema.optionalKey(Schema.Array(Uuid))
}) {}

/** The account when the e-mail and password match one; null for any other case, which it never tells apart. */
export class SignInCheck extends Schema.Class<SignInCheck>("SignInCheck")({
  account: Schema.NullOr(MemberAccount)
}) {}

/** An e-mail typed at the console's sign-in form, whose sign-in failed or was locked out. */
export class FailedSignInLookup extends Schema.Class<FailedSignInLookup>("FailedSignInLookup")({
  email: Email
}) {}

/**
 * The tenants where the account of that e-mail is an active member, so that their admins read the
 * failure in their security log; none for an unknown e-mail (then only operators read it).
 */
export class FailedSignInTenants extends Schema.Class<FailedSignInTenants>("FailedSignInTenants")({
  tenantIds: Schema.Array(Uuid)
}) {}

/**
 * The member of the tenant the console acts for: the userSub of one of their memberships. What they
 * may do is read from provisioning's records of that membership, never from the request.
 */
export const ActorSub = InputText.pipe(Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(255)))

const ConsoleTenantPath = { tenantId: Uuid }

/** The member a console list is read as, with the public list's `limit` and `cursor`. */
export const ActorListQuery = Schema.Struct({ actorSub: ActorSub, ...PageQuery.fields })

/** The member a console write is made as. */
export class ActorRequest extends Schema.Class<ActorRequest>("ActorRequest")({
  actorSub: ActorSub
}) {}

/** The public invitation's body, made as a member: its e-mail and role are judged as the public POST judges them. */
export class InviteAsRequest extends InvitationRequest.extend<InviteAsRequest>("InviteAsRequest")({
  actorSub: ActorSub
}) {}

/** A tenant's single sign-on connection set whole, as a member: only a tenant-admin of the tenant may. */
export class SetSsoConnectionAsRequest extends SsoConnectionRequest.extend<SetSsoConnectionAsRequest>("SetSsoConnectionAsRequest")({
  actorSub: ActorSub
}) {}

/** Provisioning's admin API, on its own port; the gateway never routes it. */
export class ProvisioningAdminGroup extends HttpApiGroup.make("provisioningAdmin")
  .add(
    HttpApiEndpoint.post("createTenant", "/admin/tenants", {
      payload: CreateTenantRequest,
      success: TenantWithAdmin.pipe(HttpApiSchema.status(201)),
      error: [
        asProblem(Conflict),
        // The identity provider is down: nothing was created.
        asProblem(Unavailable)
      ]
    })
  )
  .add(
    HttpApiEndpoint.get("getTenant", "/admin/tenants/:slug", {
      params: Schema.Struct({ slug: TenantSlug }),
      success: Tenant,
      error: asProblem(NotFound)
    })
  )
  .add(
    HttpApiEndpoint.get("findMember", "/admin/tenants/:slug/members/:email", {
      params: Schema.Struct({ slug: TenantSlug, email: Email }),
      success: TenantMember,
      error: asProblem(NotFound)
    })
  )
  .add(
    // The member as provisioning holds them now, read by the gateway before it mints a token for a
    // PAT request: the request itself carries no authority (docs/product-rules.md#pat-requests).
    HttpApiEndpoint.get("findMembership", "/admin/memberships/:tenantId/:userSub", {
      params: Schema.Struct({ tenantId: Uuid, userSub: Schema.String.pipe(Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(255))) }),
      success: Member,
      error: asProblem(NotFound)
    })
  )
  .add(
    HttpApiEndpoint.post("provisionSsoMember", "/admin/tenants/:slug/sso-members", {
      params: Schema.Struct({ slug: TenantSlug }),
      payload: SsoMemberRequest,
      success: TenantMember,
      error: [
        asProblem(NotFound),
        asProblem(Conflict),
        // A login of a removed person; only a new accepted invitation brings them back.
        asProblem(MemberWasRemoved)
      ]
    })
  )
  .add(
    // A new welcome link for a tenant-admin who never set a password; the older ones stop working.
    HttpApiEndpoint.post("resendWelcome", "/admin/tenants/:slug/welcome", {
      params: Schema.Struct({ slug: TenantSlug }),
      payload: ResendWelcomeRequest,
      success: WelcomeLink.pipe(HttpApiSchema.status(201)),
      error: [asProblem(NotFound), asProblem(Conflict), asProblem(Unavailable)]
    })
  )
  .add(
    HttpApiEndpoint.get("listTenantInvitations", "/admin/tenants/:slug/invitations", {
      params: Schema.Struct({ slug: TenantSlug }),
      success: Schema.Array(Invitation),
      error: asProblem(NotFound)
    })
  )
  .add(
    // The console's sign-in: an unknown e-mail, an account without a password and a wrong password
    // are all answered 200 with a null account, at the same cost.
    HttpApiEndpoint.post("checkSignIn", "/admin/sign-in-checks", {
      payload: SignInCheckRequest,
      success: SignInCheck,
      error: asProblem(Unavailable)
    })
  )
  .add(
    // A POST, so that the e-mail stays out of URLs and their logs.
    HttpApiEndpoint.post("findFailedSignInTenants", "/admin/failed-sign-in-lookups", {
      payload: FailedSignInLookup,
      success: FailedSignInTenants,
      error: asProblem(Unavailable)
    })
  )
  .add(
    // Read again by the console on each page, so that a removed membership stops counting at once
    // and a session opened before the password was last set ends.
    HttpApiEndpoint.get("getAccount", "/admin/accounts/:subject", {
      params: Schema.Struct({ subject: Schema.String.pipe(Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(255))) }),
      success: MemberAccount,
      error: [asProblem(NotFound), asProblem(Unavailable)]
    })
  )
  // The console's members and invitations pages: the public `invitations` operations, run as the
  // member `actorSub` of the tenant with the role provisioning's records give that membership, so
  // that every rule of the public endpoints applies, and answered as they answer (an `actorSub`
  // with no active membership in the tenant: 401 UNAUTHENTICATED; a member who is not a
  // tenant-admin: 403 INSUFFICIENT_SCOPE, both declared by the middleware).
  .add(
    HttpApiEndpoint.get("listMembersAs", "/admin/console/tenants/:tenantId/members", {
      params: Schema.Struct(ConsoleTenantPath),
      query: ActorListQuery,
      success: Schema.Array(Member)
    })
  )
  .add(
    HttpApiEndpoint.get("listInvitationsAs", "/admin/console/tenants/:tenantId/invitations", {
      params: Schema.Struct(ConsoleTenantPath),
      query: ActorListQuery,
      success: Schema.Array(Invitation)
    })
  )
  .add(
    HttpApiEndpoint.post("inviteAs", "/admin/console/tenants/:tenantId/invitations", {
      params: Schema.Struct(ConsoleTenantPath),
      payload: InviteAsRequest,
      success: Invitation.pipe(HttpApiSchema.status(201)),
      error: [
        asProblem(InvalidInvitationParam),
        asProblem(AlreadyInvited),
        // With Retry-After and X-RateLimit-*, as the public POST: the same hourly count.
        asProblem(RateLimited),
        // The mail could not be sent: no invitation was made.
        asProblem(Unavailable)
      ]
    })
  )
  .add(
    HttpApiEndpoint.post("revokeInvitationAs", "/admin/console/tenants/:tenantId/invitations/:id/revoke", {
      // Any string, as on the public path: an id that is not a UUID is an unknown id (404).
      params: Schema.Struct({ ...ConsoleTenantPath, id: Schema.String }),
      payload: ActorRequest,
      success: HttpApiSchema.NoContent,
      error: [asProblem(NotFound), asProblem(InvitationNotPending)]
    })
  )
  .add(
    HttpApiEndpoint.post("removeMemberAs", "/admin/console/tenants/:tenantId/members/:userSub/remove", {
      params: Schema.Struct({ ...ConsoleTenantPath, userSub: InputText.pipe(Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(255))) }),
      payload: ActorRequest,
      success: HttpApiSchema.NoContent,
      error: [asProblem(NotFound), asProblem(LastTenantAdmin)]
    })
  )
  // The console's single sign-on page: the operator's connection endpoints below, for a
  // tenant-admin of the tenant as provisioning's records hold them (answered 401 and 403 as the
  // member endpoints above are). What they change is the console's to log, not provisioning's.
  .add(
    HttpApiEndpoint.get("getSsoConnectionAs", "/admin/console/tenants/:tenantId/sso", {
      params: Schema.Struct(ConsoleTenantPath),
      query: Schema.Struct({ actorSub: ActorSub }),
      success: SsoConnection,
      // The tenant has no connection.
      error: asProblem(NotFound)
    })
  )
  .add(
    // Checked as the operator's PUT checks it (the issuer's discovery first): a 400 names what is wrong.
    HttpApiEndpoint.put("setSsoConnectionAs", "/admin/console/tenants/:tenantId/sso", {
      params: Schema.Struct(ConsoleTenantPath),
      payload: SetSsoConnectionAsRequest,
      success: SsoConnection,
      error: asProblem(NotFound)
    })
  )
  .add(
    HttpApiEndpoint.post("disableSsoConnectionAs", "/admin/console/tenants/:tenantId/sso/disable", {
      params: Schema.Struct(ConsoleTenantPath),
      payload: ActorRequest,
      success: HttpApiSchema.NoContent,
      // The tenant has no connection.
      error: asProblem(NotFound)
    })
  )
  .add(
    // What the console's security log never sees: acceptances on provisioning's magic-link page,
    // and the invitations, revocations and removals made through the public API or by operators
    // (docs/product-rules.md#security-event-log). The console reads them here, newest first.
    HttpApiEndpoint.get("listProvisioningSecurityEvents", "/admin/tenants/:tenantId/security-events", {
      params: Schema.Struct(ConsoleTenantPath),
      query: TenantSecurityEventsQuery,
      success: Schema.Array(SecurityEvent)
    })
  )
  .add(
    // The tenant's single sign-on connection, set whole (the client secret included) or replaced.
    // Its issuer is checked by reading its discovery document before anything is written.
    HttpApiEndpoint.put("setSsoConnection", "/admin/tenants/:slug/sso", {
      params: Schema.Struct({ slug: TenantSlug }),
      payload: SsoConnectionRequest,
      success: SsoConnection,
      error: asProblem(NotFound)
    })
  )
  .add(
    HttpApiEndpoint.get("getSsoConnection", "/admin/tenants/:slug/sso", {
      params: Schema.Struct({ slug: TenantSlug }),
      success: SsoConnection,
      // No such tenant, or no connection: the detail says which.
      error: asProblem(NotFound)
    })
  )
  .add(
    // An operator vouches for the domains of a connection a tenant-admin set: from then on a work
    // e-mail of them leads to this workspace's provider at the console's sign-in.
    HttpApiEndpoint.post("confirmSsoDomains", "/admin/tenants/:slug/sso/confirm-domains", {
      params: Schema.Struct({ slug: TenantSlug }),
      success: SsoConnection,
      error: asProblem(NotFound)
    })
  )
  .add(
    // The connection and its sealed secret are deleted: its people sign in with passwords again.
    HttpApiEndpoint.delete("disableSsoConnection", "/admin/tenants/:slug/sso", {
      params: Schema.Struct({ slug: TenantSlug }),
      success: HttpApiSchema.NoContent,
      error: asProblem(NotFound)
    })
  )
  .add(
    // The console's sign-in by work e-mail: which workspaces sign in that domain through their
    // provider. A POST, so that the e-mail stays out of URLs and their logs.
    HttpApiEndpoint.post("findSsoTenants", "/admin/sso-domain-lookups", {
      payload: SsoDomainLookup,
      success: SsoDomainTenants
    })
  )
  .add(
    // The console's "sign in with your company": a single-use state, nonce and PKCE verifier kept
    // here for 10 minutes, and the provider's authorization URL carrying them.
    HttpApiEndpoint.post("startSsoSignIn", "/admin/tenants/:slug/sso/sign-ins", {
      params: Schema.Struct({ slug: TenantSlug }),
      success: SsoSignInStart.pipe(HttpApiSchema.status(201)),
      error: [
        // No tenant, or no connection.
        asProblem(NotFound),
        // The provider's discovery document cannot be read now.
        asProblem(Unavailable)
      ]
    })
  )
  .add(
    // The browser back from the provider: the code is exchanged and the id token checked here, and
    // the person's account and memberships answered, the tenant's SSO_JIT member made on a first
    // sign-in. A refusal is a 401 whose detail says why (for the security log, never for the page).
    HttpApiEndpoint.post("completeSsoSignIn", "/admin/tenants/:slug/sso/completions", {
      params: Schema.Struct({ slug: TenantSlug }),
      payload: SsoSignInCompletion,
      success: MemberAccount,
      error: [
        asProblem(NotFound),
        asProblem(Unauthenticated),
        asProblem(MemberWasRemoved),
        // Another active member of the tenant has the e-mail under another account.
        asProblem(Conflict),
        asProblem(Unavailable)
      ]
    })
  )
  .add(
    HttpApiEndpoint.get("listOutboundMail", "/admin/mail", {
      query: OutboundMailQuery,
      success: Schema.Array(OutboundMail)
    })
  )
  .middleware(OperatorAuthentication) {}

export class ProvisioningAdminApi extends HttpApi.make("provisioningAdmin")
  .add(ProvisioningAdminGroup)
  .middleware(Problems) {}
