import {
  AlreadyInvited,
  ArbRole,
  type CallerIdentity,
  Email,
  InsufficientScope,
  InvalidInvitationParam,
  type Invitation,
  InvitationNotPending,
  type InvitationRequest,
  NotFound,
  type PageQuery,
  PublicPageSize,
  RateLimited,
  type Tenant,
  type Unavailable,
  Uuid
} from "@portfolio/domain"
import { InvitationRepository, type RecentInvitations } from "../ports/InvitationRepository.js"
import { Mailer } from "../ports/Mailer.js"
import { MemberRepository } from "../ports/MemberRepository.js"
import { TenantRepository } from "../ports/TenantRepository.js"
import { cursorCodec, CursorTime, keysetPage, mapPage, type RequestOrigin } from "@portfolio/platform/http"
import { newId } from "@portfolio/platform/ids"
import { UnitOfWork } from "@portfolio/platform/sql"
import { DateTime, Duration, Effect, Option, Schema } from "effect"
import { ProvisioningSettings } from "../Config.js"
import { type Actor, tenantAdminActor } from "./Actor.js"
import { authorizeTenantAdmin } from "./Authorization.js"
import { recordSecurityEvent } from "./SecurityLog.js"
import { invitationMail } from "../domain/InvitationMail.js"
import { InvitationLifetime, type InvitationRecord, statusAt, toInvitation } from "../domain/InvitationRecord.js"
import { hashMagicToken, newMagicToken } from "../domain/MagicLink.js"

const RateWindow = Duration.hours(1)
const isEmail = Schema.is(Email)
const isArbRole = Schema.is(ArbRole)

const slotAfter = (recent: RecentInvitations, now: DateTime.Utc) =>
  Option.match(recent.oldest, { onNone: () => now, onSome: (oldest) => DateTime.addDuration(oldest, RateWindow) })

const validateRequest = (request: InvitationRequest) => {
  const email = request.email.trim()
  if (!isEmail(email)) {
    return Effect.fail(new InvalidInvitationParam({ detail: "email: not a valid e-mail address." }))
  }
  if (!isArbRole(request.arbRole)) {
    return Effect.fail(new InvalidInvitationParam({ detail: `arbRole: '${request.arbRole.slice(0, 64)}' is not an assignable role; use one of ${ArbRole.literals.join(", ")}.` }))
  }
  return Effect.succeed({ email, arbRole: request.arbRole })
}

const alreadyInvited = () => Effect.fail(new AlreadyInvited({ detail: "A PENDING invitation already exists for this e-mail." }))

/** What an invitation grants to whom: an address and a role already judged valid. */
export interface InvitationTerms {
  readonly email: string
  readonly arbRole: ArbRole
}

/**
 * An invitation written, its mail not yet sent. `sendMail` is for the outermost unit of work to
 * run as its very last step, inside it: a mail that cannot be sent then leaves nothing behind, and
 * nothing after it can roll back an invitation whose magic link was mailed, nor hold row locks
 * during the SMTP round trip.
 */
export interface WrittenInvitation {
  readonly invitation: Invitation
  readonly sendMail: Effect.Effect<void, Unavailable>
}

/**
 * What is checked before an invitation's unit of work begins: the tenant, and that the person is
 * neither a member nor invited already. Answers the tenant.
 */
const invitableIn = (tenantId: string, email: string) =>
  Effect.gen(function*() {
    const tenant = yield* Effect.flatMap(TenantRepository, (tenants) => tenants.findById(tenantId)).pipe(
      Effect.flatMap(Effect.fromOption(() => new InsufficientScope({ detail: "The caller's tenant does not exist." })))
    )
    if (Option.isSome(yield* Effect.flatMap(MemberRepository, (members) => members.findActiveByEmail(tenantId, email)))) {
      return yield* new InvalidInvitationParam({ detail: "email: this person is already a member of the tenant." })
    }
    // A duplicate is answered before the tenant's creations are serialised (countCreatedSince): it
    // neither queues behind them holding a database connection, nor meets the hourly limit, since it
    // is no new invitation. Two first invitations racing past this read are settled by the storage.
    const invitations = yield* InvitationRepository
    if (yield* invitations.hasPending(tenantId, email, yield* DateTime.now)) return yield* alreadyInvited()
    return tenant
  })

/**
 * The invitation's rows and its `member_invited` entry (with an `origin`), written in the enclosing
 * unit of work, which must be open: the hourly count holds the tenant's other creations back until
 * it ends. The mail is returned, not sent (`WrittenInvitation`).
 */
const writeRows = (tenant: Tenant, { arbRole, email }: InvitationTerms, actor: Actor, origin: RequestOrigin | undefined) =>
  Effect.gen(function*() {
    const invitations = yield* InvitationRepository
    const mailer = yield* Mailer
    const settings = yield* ProvisioningSettings
    const token = yield* newMagicToken
    const now = yield* DateTime.now
    const recent = yield* invitations.countCreatedSince(tenant.id, DateTime.subtractDuration(now, RateWindow))
    if (recent.count >= settings.invitationsPerTenantPerHour) {
      return yield* new RateLimited({
        detail: `At most ${settings.invitationsPerTenantPerHour} invitations per tenant per hour; the next one is possible at ${DateTime.formatIso(slotAfter(recent, now))}.`
      })
    }
    const record: InvitationRecord = {
      id: yield* newId,
      kind: "invitation",
      tenantId: tenant.id,
      email,
      arbRole,
      invitedByEmail: actor.inviter,
      createdAt: now,
      expiresAt: DateTime.addDuration(now, InvitationLifetime),
      acceptedAt: null,
      revokedAt: null
    }
    yield* invitations.insert(record, hashMagicToken(token)).pipe(Effect.catchTag("PendingInvitationExists", alreadyInvited))
    yield* recordSecurityEvent(origin, {
      tenantId: tenant.id,
      at: now,
      actorSub: actor.subject,
      actorEmail: actor.email,
      action: "member_invited",
      target: record.id,
      detail: { email, role: arbRole, kind: "invitation" }
    })
    const mail = invitationMail({
      to: email,
      tenantSlug: tenant.slug,
      invitedByEmail: actor.inviter,
      arbRole,
      link: `${settings.acceptUrl}/${token}`,
      expiresAt: record.expiresAt
    })
    return { invitation: toInvitation(record, now), sendMail: mailer.send(mail) } satisfies WrittenInvitation
  })

/**
 * Invites a person by e-mail into the tenant, for whoever acts (a tenant-admin, a SCIM token): a
 * PENDING invitation valid 7 days, counted by the tenant's invitations per hour, and with an
 * `origin` (the public API's door) `member_invited`, written in the caller's unit of work; the
 * magic link's mail is returned for the outermost unit of work to send last (`WrittenInvitation`).
 * The person's account is created only when they accept.
 */
export const writeInvitation = Effect.fn("writeInvitation")(function*(tenantId: string, terms: InvitationTerms, actor: Actor, origin?: RequestOrigin) {
  const tenant = yield* invitableIn(tenantId, terms.email)
  // Its own unit of work, nested in the caller's: a savepoint there.
  return yield* (yield* UnitOfWork).run(writeRows(tenant, terms, actor, origin))
})

/**
 * `writeInvitation` in a unit of work of its own, which sends the mail as its last step: a mail
 * that cannot be sent leaves no invitation, and no entry, behind. For a caller that opens no unit
 * of work around it; one that does calls `writeInvitation` and sends the mail last itself.
 */
const issueInvitation = Effect.fn("issueInvitation")(function*(tenantId: string, terms: InvitationTerms, actor: Actor, origin?: RequestOrigin) {
  const tenant = yield* invitableIn(tenantId, terms.email)
  return yield* (yield* UnitOfWork).run(
    Effect.flatMap(writeRows(tenant, terms, actor, origin), ({ invitation, sendMail }) => Effect.as(sendMail, invitation))
  )
})

/** `issueInvitation` by a tenant-admin of the caller's tenant, the request judged first. */
export const createInvitation = Effect.fn("createInvitation")(function*(
  caller: CallerIdentity,
  request: InvitationRequest,
  origin?: RequestOrigin
) {
  const inviter = yield* authorizeTenantAdmin(caller, "write", "POST /tenant/invitations")
  const terms = yield* validateRequest(request)
  return yield* issueInvitation(caller.tenantId, terms, tenantAdminActor(caller, inviter), origin)
})

/** Every invitation of the caller's tenant, newest first, with its status as of now. */
export const listInvitations = Effect.fn("listInvitations")(function*(caller: CallerIdentity) {
  yield* authorizeTenantAdmin(caller, "read", "GET /tenant/invitations")
  const invitations = yield* InvitationRepository
  const records = yield* invitations.list(caller.tenantId)
  const now = yield* DateTime.now
  return records.map((record) => toInvitation(record, now))
})

/** Newest first: a page resumes after the last invitation's creation time (epoch milliseconds) and id. */
const InvitationCursor = cursorCodec("invitations", Schema.Tuple([CursorTime, Uuid]))

/** A page of `listInvitations` (docs/product-rules.md#lists). */
export const listInvitationsPage = Effect.fn("listInvitationsPage")(function*(caller: CallerIdentity, query: PageQuery) {
  yield* authorizeTenantAdmin(caller, "read", "GET /tenant/invitations")
  const invitations = yield* InvitationRepository
  const page = yield* keysetPage({
    codec: InvitationCursor,
    scope: { tenantId: caller.tenantId },
    query,
    size: PublicPageSize,
    read: (after, limit) =>
      invitations.list(caller.tenantId, { after: Option.map(after, ([createdAt, id]) => ({ createdAt: DateTime.makeUnsafe(createdAt), id })), limit }),
    keyOf: (last) => [DateTime.toEpochMillis(last.createdAt), last.id] as const
  })
  const now = yield* DateTime.now
  return mapPage(page, (record) => toInvitation(record, now))
})

const invitationNotFound = () => new NotFound({ detail: "No invitation with this id in the tenant." })
const isUuid = Schema.is(Uuid)

const findInvitation = (tenantId: string, id: string) =>
  Effect.flatMap(InvitationRepository, (invitations) => invitations.findById(tenantId, id)).pipe(
    Effect.flatMap(Effect.fromOption(invitationNotFound))
  )

const notPending = (why: string) => new InvitationNotPending({ detail: `Only a PENDING invitation can be revoked; this one ${why}.` })

/**
 * Revokes a PENDING invitation of the tenant, for whoever acts. With an `origin` (the public API's
 * door), `invitation_revoked` is recorded in the unit of work that marks it.
 */
export const revokePendingInvitation = Effect.fn("revokePendingInvitation")(function*(tenantId: string, id: string, actor: Actor, origin?: RequestOrigin) {
  const invitations = yield* InvitationRepository
  yield* (yield* UnitOfWork).run(
    Effect.gen(function*() {
      const record = yield* findInvitation(tenantId, id)
      const now = yield* DateTime.now
      const status = statusAt(record, now)
      if (status !== "PENDING") return yield* notPending(`is ${status}`)
      if (!(yield* invitations.markRevoked(record.id, now))) return yield* notPending("was just accepted or revoked")
      yield* recordSecurityEvent(origin, {
        tenantId,
        at: now,
        actorSub: actor.subject,
        actorEmail: actor.email,
        action: "invitation_revoked",
        target: record.id,
        detail: { email: record.email }
      })
    })
  )
})

/** `revokePendingInvitation` by a tenant-admin of the caller's tenant. */
export const revokeInvitation = Effect.fn("revokeInvitation")(function*(caller: CallerIdentity, id: string, origin?: RequestOrigin) {
  const revoker = yield* authorizeTenantAdmin(caller, "write", "DELETE /tenant/invitations/{id}")
  // An id that is not a UUID names no invitation; the store is not asked (its key is a uuid column).
  if (!isUuid(id)) return yield* invitationNotFound()
  yield* revokePendingInvitation(caller.tenantId, id, tenantAdminActor(caller, revoker), origin)
})

/**
 * Changes the role a PENDING invitation grants: the person joins with it. With an `origin`,
 * `invitation_role_changed` is recorded in the same unit of work.
 */
export const changeInvitationRole = Effect.fn("changeInvitationRole")(function*(tenantId: string, id: string, role: ArbRole, actor: Actor, origin?: RequestOrigin) {
  const invitations = yield* InvitationRepository
  yield* (yield* UnitOfWork).run(
    Effect.gen(function*() {
      const record = yield* findInvitation(tenantId, id)
      if (record.arbRole === role) return
      const now = yield* DateTime.now
      if (statusAt(record, now) !== "PENDING" || !(yield* invitations.changeRole(tenantId, record.id, role))) {
        return yield* new InvitationNotPending({ detail: "Only a PENDING invitation's role can be changed." })
      }
      yield* recordSecurityEvent(origin, {
        tenantId,
        at: now,
        actorSub: actor.subject,
        actorEmail: actor.email,
        action: "invitation_role_changed",
        target: record.id,
        detail: { email: record.email, from: record.arbRole, to: role }
      })
    })
  )
})

/** What a 429 of the hourly limit says: when to come back (Retry-After, X-RateLimit-Reset) and the limit. */
export const invitationRetry = Effect.fn("invitationRetry")(function*(tenantId: string) {
  const slot = yield* nextInvitationSlot(tenantId)
  const { invitationsPerTenantPerHour } = yield* ProvisioningSettings
  const now = yield* DateTime.now
  return {
    retryAfterSeconds: Math.max(1, Math.ceil(Duration.toMillis(DateTime.distance(now, slot)) / 1000)),
    resetEpochSeconds: Math.ceil(DateTime.toEpochMillis(slot) / 1000),
    limit: invitationsPerTenantPerHour
  }
})

/**
 * When the tenant may create its next invitation: the oldest one of the last hour leaves the window
 * then. Welcome links (`createTenant`) are not counted.
 */
export const nextInvitationSlot = Effect.fn("nextInvitationSlot")(function*(tenantId: string) {
  const invitations = yield* InvitationRepository
  const now = yield* DateTime.now
  const recent = yield* invitations.countCreatedSince(tenantId, DateTime.subtractDuration(now, RateWindow))
  return slotAfter(recent, now)
})
