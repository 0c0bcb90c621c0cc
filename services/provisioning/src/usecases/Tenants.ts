import { type ArbRole, Conflict, type CreateTenantRequest, Member, MemberWasRemoved, NotFound, Tenant, TenantMember, TenantWithAdmin } from "@portfolio/domain"
import { IdentityProvider } from "../ports/IdentityProvider.js"
import { InvitationRepository } from "../ports/InvitationRepository.js"
import { MemberRepository } from "../ports/MemberRepository.js"
import { TenantRepository } from "../ports/TenantRepository.js"
import { newId, UnitOfWork } from "@portfolio/platform"
import { DateTime, Effect } from "effect"
import { identityOutage } from "./IdentityOutage.js"
import { toInvitation } from "../domain/InvitationRecord.js"

const tenantNotFound = (slug: string) => new NotFound({ detail: `No tenant with the slug '${slug}'.` })

const requireTenant = (slug: string) =>
  Effect.flatMap(TenantRepository, (tenants) => tenants.findBySlug(slug)).pipe(
    Effect.flatten,
    Effect.catchTag("NoSuchElementException", () => Effect.fail(tenantNotFound(slug)))
  )

/** A tenant and its first registrant, who becomes its tenant-admin (source SIGNUP). */
export const createTenant = Effect.fn("createTenant")(function*(request: CreateTenantRequest) {
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
      return new TenantWithAdmin({ tenant, admin })
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
