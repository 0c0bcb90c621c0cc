import { InvalidRequest, Member, NotFound } from "@portfolio/domain"
import { IdentityProvider } from "../ports/IdentityProvider.js"
import { InvitationRepository } from "../ports/InvitationRepository.js"
import { MemberRepository } from "../ports/MemberRepository.js"
import { TenantRepository } from "../ports/TenantRepository.js"
import { type RequestOrigin, UnitOfWork } from "@portfolio/platform"
import { DateTime, Effect, Option, Redacted } from "effect"
import { identityOutage } from "./IdentityOutage.js"
import { recordSecurityEvent } from "./SecurityLog.js"
import { type InvitationRecord, statusAt } from "../domain/InvitationRecord.js"
import { hashMagicToken } from "../domain/MagicLink.js"
import { type PasswordContext, passwordRefusal } from "../domain/PasswordRule.js"

/** The same failure for every link that cannot be used, so that a page built on it reveals nothing. */
const unusableLink = () => new NotFound({ detail: "This invitation link is not valid." })

const pendingInvitation = (token: string) =>
  Effect.gen(function*() {
    const invitations = yield* InvitationRepository
    const now = yield* DateTime.now
    const record = yield* invitations.findByTokenHash(hashMagicToken(token))
    return Option.filter(record, (r: InvitationRecord) => statusAt(r, now) === "PENDING")
  })

export interface PendingInvitationView {
  readonly email: string
  readonly tenantSlug: string
  readonly arbRole: string
  /**
   * The e-mail is already an active member of the tenant (always so for a welcome link): accepting
   * sets the password and leaves the membership as it is.
   */
  readonly alreadyMember: boolean
}

/**
 * The PENDING invitation of a link, its tenant, and the active member of its e-mail when there is
 * one. A welcome link only ever sets the password of the member it was made for: once that member
 * is gone (removed), the link is no more usable than any other dead link, so that it cannot bring
 * a removed tenant-admin back.
 */
const usableInvitation = (token: string) =>
  Effect.gen(function*() {
    const tenants = yield* TenantRepository
    const members = yield* MemberRepository
    const record = yield* pendingInvitation(token).pipe(Effect.flatten, Effect.mapError(unusableLink))
    const tenant = yield* tenants.findById(record.tenantId).pipe(Effect.flatten, Effect.mapError(unusableLink))
    const member = yield* members.findActiveByEmail(record.tenantId, record.email)
    if (record.kind === "welcome" && Option.isNone(member)) return yield* unusableLink()
    return { record, tenant, member }
  })

/** What the acceptance page shows to the holder of a usable link. */
export const inspectInvitationLink = Effect.fn("inspectInvitationLink")(function*(token: string) {
  const { member, record, tenant } = yield* usableInvitation(token)
  const view: PendingInvitationView = {
    email: record.email,
    tenantSlug: tenant.slug,
    arbRole: record.arbRole,
    alreadyMember: Option.isSome(member)
  }
  return view
})

const checkPassword = (password: Redacted.Redacted<string>, context: PasswordContext) =>
  Option.match(passwordRefusal(Redacted.value(password), context), {
    onNone: () => Effect.void,
    onSome: (detail) => Effect.fail(new InvalidRequest({ detail }))
  })

/**
 * The invitee sets a password through the magic link: the account is created in the identity
 * provider now, the invitation is consumed and the member (source INVITATION) appears, all at once.
 * A person who is already an active member of the tenant (the first tenant-admin with their welcome
 * link, or someone who joined by single sign-on after being invited) only sets the password: the
 * invitation is consumed and their membership stays as it is (no second member, no role change).
 * Either way `invitation_accepted` enters the security log in the same unit of work, so that no
 * acceptance goes unrecorded and no refused one is recorded.
 */
export const acceptInvitation = Effect.fn("acceptInvitation")(function*(
  token: string,
  password: Redacted.Redacted<string>,
  client: RequestOrigin
) {
  const invitations = yield* InvitationRepository
  const members = yield* MemberRepository
  const identity = yield* IdentityProvider
  const unitOfWork = yield* UnitOfWork
  return yield* unitOfWork.run(
    Effect.gen(function*() {
      const { member: existing, record, tenant } = yield* usableInvitation(token)
      // Judged once the link is known good, since the invitee's address and workspace are part of the rule.
      yield* checkPassword(password, { email: record.email, tenantSlug: tenant.slug })
      const now = yield* DateTime.now
      if (!(yield* invitations.markAccepted(record.id, now))) return yield* unusableLink()
      // An outage fails the unit of work, so the invitation stays PENDING and the link keeps working.
      const account = yield* identity.ensureAccount(record.email).pipe(Effect.catchTag("IdentityProviderUnavailable", identityOutage))
      yield* identity.setPassword(account.subject, password).pipe(Effect.catchTag("IdentityProviderUnavailable", identityOutage))
      const member = Option.isSome(existing) ? existing.value : new Member({
        userSub: account.subject,
        userEmail: record.email,
        arbRole: record.arbRole,
        source: "INVITATION",
        grantedAt: now
      })
      if (Option.isNone(existing)) yield* members.insert({ tenantId: record.tenantId, member }).pipe(Effect.mapError(unusableLink))
      yield* recordSecurityEvent(client, {
        tenantId: record.tenantId,
        at: now,
        actorSub: member.userSub,
        actorEmail: record.email,
        action: "invitation_accepted",
        target: record.id,
        detail: { role: record.arbRole, kind: record.kind }
      })
      return member
    })
  )
})
