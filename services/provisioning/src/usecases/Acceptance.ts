import { InvalidRequest, Member, NotFound } from "@portfolio/domain"
import { IdentityProvider } from "../ports/IdentityProvider.js"
import { InvitationRepository } from "../ports/InvitationRepository.js"
import { MemberRepository } from "../ports/MemberRepository.js"
import { TenantRepository } from "../ports/TenantRepository.js"
import { UnitOfWork } from "@portfolio/platform"
import { DateTime, Effect, Option, Redacted } from "effect"
import { identityOutage } from "./IdentityOutage.js"
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
}

/** What the acceptance page shows to the holder of a usable link. */
export const inspectInvitationLink = Effect.fn("inspectInvitationLink")(function*(token: string) {
  const tenants = yield* TenantRepository
  const record = yield* pendingInvitation(token).pipe(Effect.flatten, Effect.mapError(unusableLink))
  const tenant = yield* tenants.findById(record.tenantId).pipe(Effect.flatten, Effect.mapError(unusableLink))
  const view: PendingInvitationView = { email: record.email, tenantSlug: tenant.slug, arbRole: record.arbRole }
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
 */
export const acceptInvitation = Effect.fn("acceptInvitation")(function*(token: string, password: Redacted.Redacted<string>) {
  const tenants = yield* TenantRepository
  const invitations = yield* InvitationRepository
  const members = yield* MemberRepository
  const identity = yield* IdentityProvider
  const unitOfWork = yield* UnitOfWork
  return yield* unitOfWork.run(
    Effect.gen(function*() {
      const record = yield* pendingInvitation(token).pipe(Effect.flatten, Effect.mapError(unusableLink))
      // Judged once the link is known good, since the invitee's address and workspace are part of the rule.
      const tenant = yield* tenants.findById(record.tenantId).pipe(Effect.flatten, Effect.mapError(unusableLink))
      yield* checkPassword(password, { email: record.email, tenantSlug: tenant.slug })
      const now = yield* DateTime.now
      if (!(yield* invitations.markAccepted(record.id, now))) return yield* unusableLink()
      // An outage fails the unit of work, so the invitation stays PENDING and the link keeps working.
      const account = yield* identity.ensureAccount(record.email).pipe(Effect.catchTag("IdentityProviderUnavailable", identityOutage))
      yield* identity.setPassword(account.subject, password).pipe(Effect.catchTag("IdentityProviderUnavailable", identityOutage))
      const member = new Member({
        userSub: account.subject,
        userEmail: record.email,
        arbRole: record.arbRole,
        source: "INVITATION",
        grantedAt: now
      })
      yield* members.insert({ tenantId: record.tenantId, member }).pipe(Effect.mapError(unusableLink))
      return member
    })
  )
})
