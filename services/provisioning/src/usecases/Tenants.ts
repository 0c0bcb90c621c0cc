import {
  type ArbRole,
  Conflict,
  type CreateTenantRequest,
  Member,
  MemberWasRemoved,
  NotFound,
  Tenant,
  TenantMember,
  TenantWithAdmin,
  WelcomeLink
} from "@portfolio/domain"
import { IdentityProvider } from "../ports/IdentityProvider.js"
import { InvitationRepository } from "../ports/InvitationRepository.js"
import { Mailer } from "../ports/Mailer.js"
import { MemberRepository } from "../ports/MemberRepository.js"
import { TenantRepository } from "../ports/TenantRepository.js"
import { type RequestOrigin } from "@portfolio/platform/http"
import { newId } from "@portfolio/platform/ids"
import { UnitOfWork } from "@portfolio/platform/sql"
import { DateTime, Effect, Option } from "effect"
import { ProvisioningSettings } from "../Config.js"
import { identityOutage } from "./IdentityOutage.js"
import { recordSecurityEvent } from "./SecurityLog.js"
import { InvitationLifetime, type InvitationRecord, statusAt, toInvitation } from "../domain/InvitationRecord.js"
import { hashMagicToken, newMagicToken } from "../domain/MagicLink.js"
import { welcomeMail } from "../domain/WelcomeMail.js"

const tenantNotFound = (slug: string) => new NotFound({ detail: `No tenant with the slug '${slug}'.` })

export const requireTenant = (slug: string) =>
  Effect.flatMap(TenantRepository, (tenants) => tenants.findBySlug(slug)).pipe(
    Effect.flatMap(Effect.fromOption(() => tenantNotFound(slug)))
  )

/**
 * A tenant and its first registrant, who becomes its tenant-admin (source SIGNUP). When that
 * person's account has no password yet, a welcome link (an invitation of kind `welcome`, PENDING
 * for 7 days, not counted by the hourly limit) is mailed to them in the same unit of work, so that
 * they can choose one: a mail that cannot be sent leaves no tenant behind. An account with a
 * password (a member elsewhere) gets no link: its owner can already sign in. `operator` is the
 * subject of the operator's assertion (`operator:<os user>` from the CLI), kept as the welcome's
 * `invitedByEmail`, since no e-mail names an operator. With an `origin` (the admin API's door), the
 * welcome is recorded as `member_invited` in the same unit of work.
 */
export const createTenant = Effect.fn("createTenant")(function*(request: CreateTenantRequest, operator: string, origin?: RequestOrigin) {
  const tenants = yield* TenantRepository
  const members = yield* MemberRepository
  const identity = yield* IdentityProvider
  const unitOfWork = yield* UnitOfWork
  const now = yield* DateTime.now
  const tenant = new Tenant({ id: yield* newId, slug: request.slug, createdAt: now })
  const email = request.adminEmail.trim()
  return yield* unitOfWork.run(
    Effect.gen(function*() {
      yield* tenants.insert(tenant)
      const account = yield* identity.ensureAccount(email).pipe(Effect.catchTag("IdentityProviderUnavailable", identityOutage))
      const admin = new Member({ userSub: account.subject, userEmail: email, arbRole: "tenant-admin", source: "SIGNUP", grantedAt: now })
      // A brand-new tenant has no member yet, so the insert cannot collide.
      yield* members.insert({ tenantId: tenant.id, member: admin }).pipe(Effect.orDie)
      if (account.hasPassword) return new TenantWithAdmin({ tenant, admin, welcome: null })
      // Nor can a brand-new tenant have a pending invitation.
      const welcome = yield* issueWelcome(tenant, email, operator, now, origin).pipe(Effect.catchTag("PendingInvitationExists", Effect.die))
      return new TenantWithAdmin({ tenant, admin, welcome })
    })
  )
})

/**
 * The welcome invitation of a tenant-admin whose account has no password, its security log entry
 * when the operator's request gave an origin, and its mail; inside the caller's unit of work, so
 * that a mail that cannot be sent leaves nothing behind.
 */
const issueWelcome = (tenant: Tenant, email: string, operator: string, now: DateTime.Utc, origin: RequestOrigin | undefined) =>
  Effect.gen(function*() {
    const settings = yield* ProvisioningSettings
    const token = yield* newMagicToken
    const welcome: InvitationRecord = {
      id: yield* newId,
      kind: "welcome",
      tenantId: tenant.id,
      email,
      arbRole: "tenant-admin",
      invitedByEmail: operator,
      createdAt: now,
      expiresAt: DateTime.addDuration(now, InvitationLifetime),
      acceptedAt: null,
      revokedAt: null
    }
    yield* (yield* InvitationRepository).insert(welcome, hashMagicToken(token))
    // An operator has a name and no e-mail.
    yield* recordSecurityEvent(origin, {
      tenantId: tenant.id,
      at: now,
      actorSub: operator,
      actorEmail: "",
      action: "member_invited",
      target: welcome.id,
      detail: { email, role: welcome.arbRole, kind: "welcome" }
    })
    yield* (yield* Mailer).send(welcomeMail({ to: email, tenantSlug: tenant.slug, link: `${settings.acceptUrl}/${token}`, expiresAt: welcome.expiresAt }))
    return new WelcomeLink({ invitationId: welcome.id, expiresAt: welcome.expiresAt })
  })

/**
 * A new welcome link for a tenant-admin who never set a password (theirs expired, or the mail was
 * lost): the pending invitations of that e-mail in the tenant are revoked, so that only the newest
 * link works. Refused for anyone else: a member with a password signs in (and resets it, later,
 * through the console); other people are invited by the tenant's admins. With an `origin`, the new
 * link is recorded as `createTenant` records the first.
 */
export const resendWelcome = Effect.fn("resendWelcome")(function*(slug: string, rawEmail: string, operator: string, origin?: RequestOrigin) {
  const tenant = yield* requireTenant(slug)
  const email = rawEmail.trim()
  const members = yield* MemberRepository
  const invitations = yield* InvitationRepository
  const identity = yield* IdentityProvider
  const unitOfWork = yield* UnitOfWork
  const member = yield* members.findActiveByEmail(tenant.id, email)
  if (Option.isNone(member)) return yield* new NotFound({ detail: `No active member with this e-mail in '${slug}'.` })
  if (member.value.arbRole !== "tenant-admin") {
    return yield* new Conflict({ detail: `This member is a ${member.value.arbRole}: only a tenant-admin gets a welcome link; the tenant's admins invite the others.` })
  }
  return yield* unitOfWork.run(
    Effect.gen(function*() {
      const account = yield* identity.ensureAccount(email).pipe(Effect.catchTag("IdentityProviderUnavailable", identityOutage))
      if (account.hasPassword) return yield* new Conflict({ detail: "This account already has a password: its owner signs in with it." })
      const now = yield* DateTime.now
      const lower = email.toLowerCase()
      for (const record of yield* invitations.list(tenant.id)) {
        if (record.email.toLowerCase() === lower && statusAt(record, now) === "PENDING") yield* invitations.markRevoked(record.id, now)
      }
      return yield* issueWelcome(tenant, email, operator, now, origin).pipe(
        // Revoked above in this unit of work: only a concurrent resend can hold the e-mail's pending slot.
        Effect.catchTag("PendingInvitationExists", () => Effect.fail(new Conflict({ detail: "Another welcome link for this e-mail is being sent; list the invitations and try again." })))
      )
    })
  )
})

export const getTenant = Effect.fn("getTenant")(function*(slug: string) {
  return yield* requireTenant(slug)
})

/** The operator's view of a tenant's invitations: all of them, newest first, with their status now. */
export const listTenantInvitations = Effect.fn("listTenantInvitations")(function*(slug: string) {
  const tenant = yield* requireTenant(slug)
  const invitations = yield* InvitationRepository
  const records = yield* invitations.list(tenant.id)
  const now = yield* DateTime.now
  return records.map((record) => toInvitation(record, now))
})

/** The active member of a tenant with this e-mail, compared case-insensitively. */
export const findMember = Effect.fn("findMember")(function*(slug: string, email: string) {
  const tenant = yield* requireTenant(slug)
  const members = yield* MemberRepository
  const member = yield* members.findActiveByEmail(tenant.id, email.trim())
  if (member._tag === "None") return yield* new NotFound({ detail: `No active member with this e-mail in '${slug}'.` })
  return new TenantMember({ tenant, member: member.value })
})

/** The active member of this userSub in the tenant; a removed or unknown one is not found. */
export const findMembership = Effect.fn("findMembership")(function*(tenantId: string, userSub: string) {
  const members = yield* MemberRepository
  const member = yield* members.findActiveBySub(tenantId, userSub)
  if (member._tag === "None") return yield* new NotFound({ detail: "No active member with this userSub in the tenant." })
  return member.value
})

export interface SsoLogin {
  readonly slug: string
  readonly userSub: string
  readonly email: string
  readonly arbRole: ArbRole
}

/**
 * What an OIDC login does on first sight of a person in a tenant: a member with source SSO_JIT.
 * A person already active in the tenant keeps the membership they have. A login must not undo a
 * removal (irreversible, docs/product-rules.md#invitations-and-members): a removed userSub is refused until the person accepts
 * a new invitation, which makes them active again.
 */
export const provisionSsoMember = Effect.fn("provisionSsoMember")(function*(login: SsoLogin) {
  const tenant = yield* requireTenant(login.slug)
  const members = yield* MemberRepository
  const email = login.email.trim()
  const existing = yield* members.findActiveBySub(tenant.id, login.userSub)
  if (existing._tag === "Some") return new TenantMember({ tenant, member: existing.value })
  if (yield* members.hasRemovedMembership(tenant.id, login.userSub)) {
    return yield* new MemberWasRemoved({
      detail: `This person was removed from '${login.slug}'; only a new invitation, once accepted, brings them back.`
    })
  }
  const member = new Member({
    userSub: login.userSub,
    userEmail: email,
    arbRole: login.arbRole,
    source: "SSO_JIT",
    grantedAt: yield* DateTime.now
  })
  yield* members.insert({ tenantId: tenant.id, member }).pipe(
    Effect.catchTag("MemberExists", () =>
      Effect.fail(new Conflict({ detail: "Another active member of the tenant already has this e-mail." })))
  )
  return new TenantMember({ tenant, member })
})
