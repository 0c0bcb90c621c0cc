import { InvalidRequest, Member, NotFound, Unauthenticated } from "@portfolio/domain"
import { type Account, IdentityProvider } from "../ports/IdentityProvider.js"
import { InvitationRepository } from "../ports/InvitationRepository.js"
import { MemberRepository } from "../ports/MemberRepository.js"
import { ScimUserRepository } from "../ports/ScimUserRepository.js"
import { TenantRepository } from "../ports/TenantRepository.js"
import { type RequestOrigin } from "@portfolio/platform/http"
import { UnitOfWork } from "@portfolio/platform/sql"
import { DateTime, Effect, Result, Option, Redacted } from "effect"
import { identityOutage } from "./IdentityOutage.js"
import { recordSecurityEvent } from "./SecurityLog.js"
import { type InvitationRecord, MaxWrongPasswords, statusAt } from "../domain/InvitationRecord.js"
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
   * leaves the membership as it is.
   */
  readonly alreadyMember: boolean
  /**
   * The e-mail's account already has a password (its owner can sign in): accepting asks for that
   * password and never sets another, so that a link cannot take over an existing account.
   */
  readonly hasPassword: boolean
}

/**
 * The PENDING invitation of a link, its tenant, and the active member of its e-mail when there is
 * one. A welcome link only ever serves the member it was made for: once that member is gone
 * (removed), the link is no more usable than any other dead link, so that it cannot bring a
 * removed tenant-admin back.
 */
const usableInvitation = (token: string) =>
  Effect.gen(function*() {
    const tenants = yield* TenantRepository
    const members = yield* MemberRepository
    const record = yield* pendingInvitation(token).pipe(Effect.flatMap(Effect.fromOption(unusableLink)))
    const tenant = yield* tenants.findById(record.tenantId).pipe(Effect.flatMap(Effect.fromOption(unusableLink)))
    const member = yield* members.findActiveByEmail(record.tenantId, record.email)
    if (record.kind === "welcome" && Option.isNone(member)) return yield* unusableLink()
    return { record, tenant, member }
  })

/** The e-mail's account when it has a password: its owner proves it rather than choosing another. */
const passwordHolder = (email: string) =>
  Effect.flatMap(IdentityProvider, (identity) => identity.findAccountByEmail(email)).pipe(
    Effect.catchTag("IdentityProviderUnavailable", identityOutage),
    Effect.map(Option.filter((account: Account) => account.hasPassword))
  )

/** What the acceptance page shows to the holder of a usable link. */
export const inspectInvitationLink = Effect.fn("inspectInvitationLink")(function*(token: string) {
  const { member, record, tenant } = yield* usableInvitation(token)
  const holder = yield* passwordHolder(record.email)
  const view: PendingInvitationView = {
    email: record.email,
    tenantSlug: tenant.slug,
    arbRole: record.arbRole,
    alreadyMember: Option.isSome(member),
    hasPassword: Option.isSome(holder)
  }
  return view
})

const checkPassword = (password: Redacted.Redacted<string>, context: PasswordContext) =>
  Option.match(passwordRefusal(Redacted.value(password), context), {
    onNone: () => Effect.void,
    onSome: (detail) => Effect.fail(new InvalidRequest({ detail }))
  })

/**
 * A wrong current password typed through the link: counted, and the fifth revokes the invitation,
 * so that the page is no way round the console's lockout; recorded, never with what was typed.
 */
const refuseWrongPassword = (record: InvitationRecord, at: DateTime.Utc, client: RequestOrigin) =>
  Effect.gen(function*() {
    const invitations = yield* InvitationRepository
    const wrongPasswords = yield* invitations.recordWrongPassword(record.id)
    if (wrongPasswords >= MaxWrongPasswords) yield* invitations.markRevoked(record.id, at)
    yield* recordSecurityEvent(client, {
      tenantId: record.tenantId,
      at,
      actorSub: null,
      actorEmail: record.email,
      action: "invitation_password_refused",
      target: record.id,
      detail: { role: record.arbRole, kind: record.kind, wrongPasswords }
    })
    return new Unauthenticated({ detail: "The password is not right." })
  })

/**
 * Accepts an invitation through its magic link, the invitation consumed and the member (source
 * INVITATION) added at once. Whose account it is decides what the password typed is for:
 * - an account without a password (or none yet: it is created now) gets this one as its password,
 *   judged by the password rule;
 * - an account that has a password is never given another (its owner is a member elsewhere, and a
 *   link, forwarded or stolen, must not take the account over): the password typed must be that
 *   one. A wrong one is refused, counted and recorded, and that refusal is committed so that the
 *   count holds; the invitation stays PENDING until the count revokes it.
 * A person who is already an active member of the tenant (the first tenant-admin with their
 * welcome link, or someone who joined by single sign-on after being invited) keeps their
 * membership as it is (no second member, no role change). `invitation_accepted` enters the
 * security log in the same unit of work, so that no acceptance goes unrecorded, and the SCIM User
 * the invitation was made for is linked to the member in it, so that it reads `active: true`.
 */
export const acceptInvitation = Effect.fn("acceptInvitation")(function*(
  token: string,
  password: Redacted.Redacted<string>,
  client: RequestOrigin
) {
  const invitations = yield* InvitationRepository
  const members = yield* MemberRepository
  const identity = yield* IdentityProvider
  const scimUsers = yield* ScimUserRepository
  const unitOfWork = yield* UnitOfWork
  const outcome = yield* unitOfWork.run(
    Effect.gen(function*() {
      const { member: existing, record, tenant } = yield* usableInvitation(token)
      const now = yield* DateTime.now
      // Decided under the invitation's lock, from the account as it is now, not as the form was shown.
      const holder = yield* passwordHolder(record.email)
      if (Option.isSome(holder)) {
        const proven = yield* identity.verifyPassword(record.email, password).pipe(Effect.catchTag("IdentityProviderUnavailable", identityOutage))
        if (!Option.exists(proven, (account) => account.subject === holder.value.subject)) {
          // Answered, not failed: the unit of work commits, keeping the count and its entry.
          return Result.fail(yield* refuseWrongPassword(record, now, client))
        }
      } else {
        // Judged once the link is known good, since the invitee's address and workspace are part of the rule.
        yield* checkPassword(password, { email: record.email, tenantSlug: tenant.slug })
      }
      if (!(yield* invitations.markAccepted(record.id, now))) return yield* unusableLink()
      // An outage fails the unit of work, so the invitation stays PENDING and the link keeps working.
      const account = Option.isSome(holder)
        ? holder.value
        : yield* identity.ensureAccount(record.email).pipe(Effect.catchTag("IdentityProviderUnavailable", identityOutage))
      if (Option.isNone(holder)) {
        yield* identity.setPassword(account.subject, password).pipe(Effect.catchTag("IdentityProviderUnavailable", identityOutage))
      }
      const member = Option.isSome(existing) ? existing.value : new Member({
        userSub: account.subject,
        userEmail: record.email,
        arbRole: record.arbRole,
        source: "INVITATION",
        grantedAt: now
      })
      if (Option.isNone(existing)) yield* members.insert({ tenantId: record.tenantId, member }).pipe(Effect.mapError(unusableLink))
      // The SCIM User of the member, or the one this invitation was made for, now reads active.
      yield* scimUsers.memberChanged(record.tenantId, member.userSub, record.id, now)
      yield* recordSecurityEvent(client, {
        tenantId: record.tenantId,
        at: now,
        actorSub: member.userSub,
        actorEmail: record.email,
        action: "invitation_accepted",
        target: record.id,
        detail: { role: record.arbRole, kind: record.kind }
      })
      return Result.succeed(member)
    })
  )
  return yield* Effect.fromResult(outcome)
})
