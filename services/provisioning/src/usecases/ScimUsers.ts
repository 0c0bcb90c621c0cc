import type { ArbRole, CallerIdentity, Unavailable } from "@portfolio/domain"
import { type RequestOrigin } from "@portfolio/platform/http"
import { newId } from "@portfolio/platform/ids"
import { UnitOfWork } from "@portfolio/platform/sql"
import { DateTime, Effect, Result, Option } from "effect"
import { statusAt } from "../domain/InvitationRecord.js"
import { parseScimFilter } from "../domain/ScimFilter.js"
import { listWindowOf } from "../domain/ScimListWindow.js"
import { applyPatch, type ScimPatchOperation } from "../domain/ScimPatch.js"
import { attributesOfInput, ScimRefusal, type ScimUserAttributes, type ScimUserInputLike } from "../domain/ScimUser.js"
import { namesVersion } from "../domain/ScimVersion.js"
import { domainOf } from "../domain/SsoSignIn.js"
import { IdentityProvider } from "../ports/IdentityProvider.js"
import { InvitationRepository } from "../ports/InvitationRepository.js"
import { type ScimUserRecord, ScimUserRepository, type ScimUserView } from "../ports/ScimUserRepository.js"
import { type SsoConnectionRecord, SsoConnectionRepository } from "../ports/SsoConnectionRepository.js"
import { type Actor, scimActor } from "./Actor.js"
import { authorizeScim } from "./Authorization.js"
import { identityOutage } from "./IdentityOutage.js"
import { changeInvitationRole, revokePendingInvitation, writeInvitation, type WrittenInvitation } from "./Invitations.js"
import { changeMemberRole, removeMembership } from "./Members.js"
import { recordSecurityEvent } from "./SecurityLog.js"
import { joinBySingleSignOn } from "./SingleSignOn.js"

/**
 * SCIM 2.0 Users (docs/scim.md): what an identity tool provisions in a tenant, and what each change
 * does to the person behind the User, through the same rules as every other door (removal,
 * invitations, the last tenant-admin, the security log), acted by the SCIM token.
 */

const notFound = () => new ScimRefusal({ status: 404, detail: "No User with this id in the tenant." })
const versionChanged = () => new ScimRefusal({ status: 412, detail: "If-Match names another version of this User: read it again." })
const taken = (attribute: "userName" | "email", why = "") =>
  new ScimRefusal({ status: 409, scimType: "uniqueness", detail: `Another User of the tenant has this ${attribute === "email" ? "e-mail" : "userName"}${why}.` })
const emailFixed = () =>
  new ScimRefusal({
    status: 400,
    scimType: "mutability",
    detail: "The e-mail of an active member names their account in every tenant and cannot change: deprovision the User and provision it anew."
  })

const sameAddress = (a: string, b: string) => a.toLowerCase() === b.toLowerCase()

/** Whom a User stands for, as of now: an active member, a pending invitation, or nobody yet. */
type Person =
  | { readonly kind: "member"; readonly userSub: string }
  | { readonly kind: "invited"; readonly invitationId: string }
  | { readonly kind: "none" }

const personOf = (user: ScimUserView, now: DateTime.Utc) =>
  Effect.gen(function*() {
    if (user.active && user.userSub !== null) return { kind: "member", userSub: user.userSub } as Person
    if (user.invitationId === null) return { kind: "none" } as Person
    const invitation = yield* (yield* InvitationRepository).findById(user.tenantId, user.invitationId)
    return Option.exists(invitation, (record) => statusAt(record, now) === "PENDING")
      ? ({ kind: "invited", invitationId: user.invitationId } as Person)
      : ({ kind: "none" } as Person)
  })

/**
 * The User's attributes as a change starts from. `active` is what leaves the person as they are:
 * true for a member and for a pending invitation (which stays `active: false` on the wire until
 * accepted), so that an operation that does not name `active` neither removes nor invites.
 */
const baselineOf = (user: ScimUserView, person: Person): ScimUserAttributes => ({
  userName: user.userName,
  externalId: user.externalId,
  displayName: user.displayName,
  givenName: user.givenName,
  familyName: user.familyName,
  formattedName: user.formattedName,
  email: user.email,
  arbRole: user.arbRole,
  active: person.kind !== "none"
})

const StoredAttributes = ["userName", "externalId", "displayName", "givenName", "familyName", "formattedName", "email", "arbRole"] as const

const changedAttributes = (user: ScimUserView, desired: ScimUserAttributes) => StoredAttributes.filter((name) => user[name] !== desired[name])

const recordOf = (user: Pick<ScimUserRecord, "id" | "tenantId" | "createdAt">, desired: ScimUserAttributes, links: Links, version: number, at: DateTime.Utc): ScimUserRecord => ({
  id: user.id,
  tenantId: user.tenantId,
  userName: desired.userName,
  externalId: desired.externalId,
  email: desired.email,
  givenName: desired.givenName,
  familyName: desired.familyName,
  formattedName: desired.formattedName,
  displayName: desired.displayName,
  arbRole: desired.arbRole,
  userSub: links.userSub,
  invitationId: links.invitationId,
  version,
  createdAt: user.createdAt,
  updatedAt: at
})

interface Links {
  readonly userSub: string | null
  readonly invitationId: string | null
}

const linksOf = (user: ScimUserRecord): Links => ({ userSub: user.userSub, invitationId: user.invitationId })

/** Writes the User if it is still at `expectedVersion` (it is locked: only a bug makes it not). */
const write = (record: ScimUserRecord, expectedVersion: number) =>
  Effect.flatMap(ScimUserRepository, (users) => users.update(record, expectedVersion)).pipe(
    Effect.catchTag("ScimUserTaken", ({ attribute }) => Effect.fail(taken(attribute))),
    Effect.flatMap((written) => (written ? Effect.void : Effect.fail(versionChanged())))
  )

/** The role of a User that names none: the single sign-on connection's default, else viewer. */
const defaultRoleOf = (connection: Option.Option<SsoConnectionRecord>) =>
  Option.match(connection, { onNone: () => "viewer" as const, onSome: (c) => c.defaultRole })

const connectionOf = (tenantId: string) => Effect.flatMap(SsoConnectionRepository, (connections) => connections.find(tenantId))

/** What a change did to the person, and the invitation mail it owes: sent as the very last step of the unit of work. */
interface PersonOutcome {
  readonly links: Links
  readonly changed: boolean
  readonly sendMail: Effect.Effect<void, Unavailable>
}

const NoMail = Effect.void

/**
 * An invitation for the User's person, written in the SCIM unit of work, its mail returned to be
 * sent last (`WrittenInvitation`); one pending already, or a member with the address, is the e-mail taken.
 */
const invite = (tenantId: string, desired: ScimUserAttributes, actor: Actor, origin: RequestOrigin) =>
  writeInvitation(tenantId, { email: desired.email, arbRole: desired.arbRole }, actor, origin).pipe(
    Effect.catchTags({
      AlreadyInvited: () => Effect.fail(taken("email", ": a pending invitation made outside SCIM; revoke it first")),
      InvalidInvitationParam: () => Effect.fail(taken("email", ": an active member"))
    })
  )

/**
 * A new User's person (docs/scim.md, "POST /Users"): a member at once (SSO_JIT) when the tenant's
 * single sign-on connection covers the e-mail's domain, unless the person was removed from the
 * tenant; otherwise an invitation.
 */
const provision = (tenantId: string, desired: ScimUserAttributes, connection: Option.Option<SsoConnectionRecord>, actor: Actor, origin: RequestOrigin) =>
  Effect.gen(function*() {
    if (Option.exists(connection, (c) => c.domains.includes(domainOf(desired.email)))) {
      const account = yield* (yield* IdentityProvider).ensureAccount(desired.email).pipe(Effect.catchTag("IdentityProviderUnavailable", identityOutage))
      const member = yield* joinBySingleSignOn(tenantId, account, desired.arbRole, yield* DateTime.now)
      if (Option.isSome(member)) return { links: { userSub: account.subject, invitationId: null }, changed: true, sendMail: NoMail } satisfies PersonOutcome
    }
    const { invitation, sendMail } = yield* invite(tenantId, desired, actor, origin)
    return { links: { userSub: null, invitationId: invitation.id }, changed: true, sendMail } satisfies PersonOutcome
  })

/**
 * What a change does to the User's person (docs/scim.md, "What each change does to the member"):
 * deactivating removes the member or revokes the invitation; activating someone who is neither
 * mails a new invitation (never a membership: removal is irreversible); a new role applies to
 * the member or the invitation; a new e-mail replaces a pending invitation by one to that address.
 * Answers the User's links, whether the person changed, and the mail owed (`PersonOutcome`). The
 * role compared is the User's as read: an active member's own (`ScimUserView`).
 */
const applyToPerson = (user: ScimUserView, person: Person, desired: ScimUserAttributes, actor: Actor, origin: RequestOrigin) =>
  Effect.gen(function*() {
    const tenantId = user.tenantId
    const unchanged: PersonOutcome = { links: linksOf(user), changed: false, sendMail: NoMail }
    const invited = (written: WrittenInvitation): PersonOutcome => ({
      links: { ...linksOf(user), invitationId: written.invitation.id },
      changed: true,
      sendMail: written.sendMail
    })
    if (!desired.active) {
      if (person.kind === "member") yield* removeMembership(tenantId, person.userSub, actor, origin)
      if (person.kind === "invited") yield* revokePendingInvitation(tenantId, person.invitationId, actor, origin)
      return { ...unchanged, changed: person.kind !== "none" }
    }
    switch (person.kind) {
      case "none":
        return invited(yield* invite(tenantId, desired, actor, origin))
      case "member":
        if (desired.arbRole === user.arbRole) return unchanged
        yield* changeMemberRole(tenantId, person.userSub, desired.arbRole, actor, origin)
        return { ...unchanged, changed: true }
      case "invited":
        if (!sameAddress(desired.email, user.email)) {
          yield* revokePendingInvitation(tenantId, person.invitationId, actor, origin)
          return invited(yield* invite(tenantId, desired, actor, origin))
        }
        if (desired.arbRole === user.arbRole) return unchanged
        yield* changeInvitationRole(tenantId, person.invitationId, desired.arbRole, actor, origin)
        return { ...unchanged, changed: true }
    }
  })

/** The attributes written before anything is done to the person, so that a taken userName or e-mail stops the change there. */
const writeAttributes = (user: ScimUserView, desired: ScimUserAttributes, changed: ReadonlyArray<string>, now: DateTime.Utc) =>
  changed.length === 0
    ? Effect.succeed(user.version)
    : Effect.as(write(recordOf(user, desired, linksOf(user), user.version + 1, now), user.version), user.version + 1)

/**
 * The User's new links once the person changed, in a new version unless the change to the member
 * gave it one already (`memberChanged`); answers the User's version.
 */
const writeOutcome = (user: ScimUserView, desired: ScimUserAttributes, written: number, outcome: PersonOutcome, now: DateTime.Utc) =>
  Effect.gen(function*() {
    const current = (yield* reread(user.tenantId, user.id)).version
    const relinked = outcome.links.userSub !== user.userSub || outcome.links.invitationId !== user.invitationId
    if (!relinked && !(outcome.changed && current === written)) return current
    yield* write(recordOf(user, desired, outcome.links, current + 1, now), current)
    return current + 1
  })

const reread = (tenantId: string, id: string) =>
  Effect.flatMap(ScimUserRepository, (users) => users.findById(tenantId, id)).pipe(Effect.flatMap((user) => Effect.fromOption(user)), Effect.orDie)

/**
 * Every active member of the tenant given a User, or linked to the User of their e-mail, so that a
 * change never invites a person who is a member already, nor deletes a User without its member.
 */
const adoptMembers = (tenantId: string) =>
  Effect.flatMap(ScimUserRepository, (users) => Effect.flatMap(DateTime.now, (now) => users.adoptMembers(tenantId, now)))

/** The User to change, adopted members first, held until the unit of work ends; 412 for another version than `If-Match` names. */
const lockedUser = (tenantId: string, id: string, ifMatch: string | undefined) =>
  Effect.gen(function*() {
    yield* adoptMembers(tenantId)
    const user = yield* Effect.flatMap(ScimUserRepository, (users) => users.lockById(tenantId, id)).pipe(
      Effect.flatMap(Effect.fromOption(notFound))
    )
    if (ifMatch !== undefined && !namesVersion(ifMatch, user.version)) return yield* versionChanged()
    return user
  })

/** The caller's tenant's Users, filtered and paged as `GET /Users` asks, every active member adopted first. */
export const listScimUsers = Effect.fn("listScimUsers")(function*(
  caller: CallerIdentity,
  query: { readonly filter?: string | undefined; readonly startIndex?: string | undefined; readonly count?: string | undefined }
) {
  yield* authorizeScim(caller)
  const filter = query.filter === undefined ? [] : yield* Effect.fromResult(parseScimFilter(query.filter))
  const window = listWindowOf(query.startIndex, query.count)
  // So that a tool looking a person up before creating them finds the member, not a 409 later.
  yield* adoptMembers(caller.tenantId)
  const page = yield* (yield* ScimUserRepository).list(caller.tenantId, filter, window)
  return { ...page, startIndex: window.offset + 1 }
})

/** One User of the caller's tenant, every active member adopted first, as before any call on /Users. */
export const getScimUser = Effect.fn("getScimUser")(function*(caller: CallerIdentity, id: string) {
  yield* authorizeScim(caller)
  // So that a User whose person joined by another door reads linked, and active.
  yield* adoptMembers(caller.tenantId)
  const found = yield* (yield* ScimUserRepository).findById(caller.tenantId, id)
  return yield* Option.match(found, { onNone: () => Effect.fail(notFound()), onSome: Effect.succeed })
})

/**
 * Provisions a User (docs/scim.md, "POST /Users"). With `active: false` the User is only kept. The
 * User is written before anything else, so that a taken userName or e-mail does nothing; the
 * invitation's mail is the unit of work's very last step, so that a failure after the invitation's
 * rows (the User's write, the security log) has mailed nothing.
 */
export const createScimUser = Effect.fn("createScimUser")(function*(caller: CallerIdentity, input: ScimUserInputLike, origin: RequestOrigin) {
  yield* authorizeScim(caller)
  const actor = scimActor(caller)
  const tenantId = caller.tenantId
  const users = yield* ScimUserRepository
  return yield* (yield* UnitOfWork).run(
    Effect.gen(function*() {
      // A member who joined otherwise is that person's User already: a 409, never a second invitation.
      yield* adoptMembers(tenantId)
      const now = yield* DateTime.now
      const connection = yield* connectionOf(tenantId)
      const defaultRole = defaultRoleOf(connection)
      const desired = yield* Effect.fromResult(attributesOfInput(input, { defaultRole, roleWhenAbsent: defaultRole, activeWhenAbsent: true }))
      const user = recordOf({ id: yield* newId, tenantId, createdAt: now }, desired, { userSub: null, invitationId: null }, 1, now)
      yield* users.insert(user).pipe(Effect.catchTag("ScimUserTaken", ({ attribute }) => Effect.fail(taken(attribute))))
      const { links, sendMail } = desired.active
        ? yield* provision(tenantId, desired, connection, actor, origin)
        : { links: linksOf(user), sendMail: NoMail }
      // One creation, one version: the links are part of it.
      if (links.userSub !== null || links.invitationId !== null) yield* write(recordOf(user, desired, links, 1, now), 1)
      yield* recordSecurityEvent(origin, {
        tenantId,
        at: now,
        actorSub: actor.subject,
        actorEmail: actor.email,
        action: "scim_user_created",
        target: user.id,
        detail: {
          userName: desired.userName,
          email: desired.email,
          role: desired.arbRole,
          person: links.userSub !== null ? "member" : links.invitationId !== null ? "invited" : "none"
        }
      })
      const created = yield* reread(tenantId, user.id)
      yield* sendMail
      return created
    })
  )
})

/**
 * A change of a User (PUT, PATCH): the attributes `desire` asks for, from the User's baseline and
 * the tenant's default role, written, then applied to the person; a new version when anything changed.
 */
const changeScimUser = (
  caller: CallerIdentity,
  id: string,
  ifMatch: string | undefined,
  origin: RequestOrigin,
  desire: (baseline: ScimUserAttributes, defaultRole: ArbRole) => Result.Result<ScimUserAttributes, ScimRefusal>
) =>
  Effect.gen(function*() {
    yield* authorizeScim(caller)
    const actor = scimActor(caller)
    const tenantId = caller.tenantId
    return yield* (yield* UnitOfWork).run(
      Effect.gen(function*() {
        const user = yield* lockedUser(tenantId, id, ifMatch)
        const now = yield* DateTime.now
        const person = yield* personOf(user, now)
        const desired = yield* Effect.fromResult(desire(baselineOf(user, person), defaultRoleOf(yield* connectionOf(tenantId))))
        if (person.kind === "member" && desired.active && !sameAddress(desired.email, user.email)) return yield* emailFixed()
        const changed = changedAttributes(user, desired)
        const written = yield* writeAttributes(user, desired, changed, now)
        const outcome = yield* applyToPerson(user, person, desired, actor, origin)
        const version = yield* writeOutcome(user, desired, written, outcome, now)
        if (version !== user.version) {
          yield* recordSecurityEvent(origin, {
            tenantId,
            at: now,
            actorSub: actor.subject,
            actorEmail: actor.email,
            action: "scim_user_updated",
            target: user.id,
            detail: { changed: [...changed, ...(outcome.changed ? ["person"] : [])].join(","), active: String(desired.active) }
          })
        }
        const changedUser = yield* reread(tenantId, user.id)
        yield* outcome.sendMail
        return changedUser
      })
    )
  })

/** `PUT /Users/{id}`: the attributes replaced, as a PATCH of each would; `roles` or `active` left out stay as they are. */
export const replaceScimUser = Effect.fn("replaceScimUser")(function*(
  caller: CallerIdentity,
  id: string,
  input: ScimUserInputLike,
  ifMatch: string | undefined,
  origin: RequestOrigin
) {
  return yield* changeScimUser(caller, id, ifMatch, origin, (baseline, defaultRole) =>
    attributesOfInput(input, { defaultRole, roleWhenAbsent: baseline.arbRole, activeWhenAbsent: baseline.active }))
})

export const patchScimUser = Effect.fn("patchScimUser")(function*(
  caller: CallerIdentity,
  id: string,
  operations: ReadonlyArray<ScimPatchOperation>,
  ifMatch: string | undefined,
  origin: RequestOrigin
) {
  return yield* changeScimUser(caller, id, ifMatch, origin, (baseline, defaultRole) => applyPatch(baseline, operations, defaultRole))
})

/** `DELETE /Users/{id}`: deprovisions the person as `active: false` does, then the User is gone. */
export const deleteScimUser = Effect.fn("deleteScimUser")(function*(caller: CallerIdentity, id: string, ifMatch: string | undefined, origin: RequestOrigin) {
  yield* authorizeScim(caller)
  const actor = scimActor(caller)
  const tenantId = caller.tenantId
  yield* (yield* UnitOfWork).run(
    Effect.gen(function*() {
      const user = yield* lockedUser(tenantId, id, ifMatch)
      const now = yield* DateTime.now
      const person = yield* personOf(user, now)
      yield* applyToPerson(user, person, { ...baselineOf(user, person), active: false }, actor, origin)
      yield* (yield* ScimUserRepository).markDeleted(tenantId, user.id, now)
      yield* recordSecurityEvent(origin, {
        tenantId,
        at: now,
        actorSub: actor.subject,
        actorEmail: actor.email,
        action: "scim_user_deleted",
        target: user.id,
        detail: { userName: user.userName, email: user.email }
      })
    })
  )
})
