import { recordSecurityEvents } from "@portfolio/platform/security"
import { Clock, Data, DateTime, Effect, Option, type Redacted } from "effect"
import { ConsoleSettings } from "../Config.js"
import { newSecret, sameToken, sessionEndMs, sessionIdHash, shouldTouch } from "../domain/SessionRules.js"
import { emailKey, usableMemberships } from "../domain/SignInRules.js"
import { DirectoryDesk, type MemberAccount, type Membership } from "../ports/DirectoryDesk.js"
import type { SecurityAction } from "../domain/SecurityActions.js"
import { type SessionRecord, SessionRepository } from "../ports/SessionRepository.js"
import { SignInAttempts } from "../ports/SignInAttempts.js"
import type { Actor } from "../ports/TokenDesk.js"
import { LockoutNotices } from "./LockoutNotices.js"
import { CurrentOrigin } from "./Requests.js"

/** Wrong e-mail or password, or an account without one: the page says the same for all. */
export class InvalidCredentials extends Data.TaggedError("InvalidCredentials")<{}> {}
export class LockedOut extends Data.TaggedError("LockedOut")<{ readonly retryAfterMs: number }> {}
/** The person is a member of no workspace (all their memberships were removed). */
export class NoWorkspace extends Data.TaggedError("NoWorkspace")<{}> {}
/** A password was right, but every workspace of the person signs in through its identity provider only. */
export class SsoRequired extends Data.TaggedError("SsoRequired")<{ readonly tenantSlugs: ReadonlyArray<string> }> {}


export interface SignedIn {
  /** The cookie's value: returned once, stored only as its hash. */
  readonly sessionId: string
  /** Several workspaces: the member chooses one before any page. */
  readonly mustChooseTenant: boolean
}

/** A signed-in member on a page: their session, account and the membership they work in. */
export interface Member {
  readonly session: SessionRecord
  readonly account: MemberAccount
  /** None while the member has not chosen among several workspaces. */
  readonly membership: Option.Option<Membership>
}

export const actorOf = (member: Member, membership: Membership): Actor => ({
  tenantId: membership.tenantId,
  userSub: member.account.subject,
  email: member.account.email,
  role: membership.role
})

/** Records one action in the log, for each tenant it concerns. */
export const recordSecurityEvent = (event: {
  readonly action: SecurityAction
  readonly tenantIds: ReadonlyArray<string | null>
  readonly actorSub: string | null
  readonly actorEmail: string
  readonly target?: string | null
  readonly detail?: Readonly<Record<string, string | number | null>>
}) =>
  Effect.gen(function*() {
    const origin = yield* CurrentOrigin
    const at = yield* DateTime.now
    const { tenantIds, ...entry } = event
    yield* recordSecurityEvents(origin, tenantIds.map((tenantId) => ({ ...entry, tenantId, at })))
  })

/**
 * Where a failed or locked-out sign-in is filed: in the log of every tenant the e-mail's account is
 * a member of, for their admins (docs/product-rules.md#security-event-log); under no tenant, for
 * operators, when the e-mail has no account or provisioning cannot say.
 */
const failureTenants = (key: string) =>
  Effect.flatMap(DirectoryDesk, (directory) => directory.failedSignInTenants(key)).pipe(
    Effect.map((tenantIds): ReadonlyArray<string | null> => (tenantIds.length === 0 ? [null] : tenantIds)),
    Effect.catchTag("UpstreamUnavailable", () => Effect.succeed([null]))
  )

/**
 * Files a refused sign-in after the answer, never before it: asking provisioning for the e-mail's
 * tenants and writing one entry per tenant take longer for an e-mail that has an account, and the
 * time of the refusal must not tell which e-mails have one (docs/security.md).
 */
const fileRefusal = (action: "sign_in_failed" | "sign_in_locked", key: string) =>
  Effect.flatMap(failureTenants(key), (tenantIds) => recordSecurityEvent({ action, tenantIds, actorSub: null, actorEmail: key })).pipe(
    Effect.catchCause((cause) => Effect.logWarning("a refused sign-in could not be recorded", cause)),
    Effect.forkDetach
  )

/**
 * Signs a person in (docs/product-rules.md#console-sign-in): the lockout decides before the
 * password is checked, the attempt counts as failed until it succeeds, and a new session (never
 * one the browser brought) is created.
 */
export const signIn = (email: string, password: Redacted.Redacted<string>) =>
  Effect.gen(function*() {
    const settings = yield* ConsoleSettings
    const origin = yield* CurrentOrigin
    const key = emailKey(email)
    const nowMs = yield* Clock.currentTimeMillis
    const { admission, attemptId } = yield* (yield* SignInAttempts).begin({ emailKey: key, ip: origin.ip, atMs: nowMs }, settings.lockout)
    if (admission._tag === "Locked" || attemptId === undefined) {
      if ((yield* LockoutNotices).claim(key, nowMs, settings.lockout.windowMs)) yield* fileRefusal("sign_in_locked", key)
      return yield* new LockedOut({ retryAfterMs: admission._tag === "Locked" ? admission.retryAfterMs : settings.lockout.windowMs })
    }
    const attempts = yield* SignInAttempts
    // An attempt that could not be checked (provisioning away) is no guess: it must not lock anyone out.
    const account = yield* (yield* DirectoryDesk).checkSignIn(key, password).pipe(
      Effect.tapErrorTag("UpstreamUnavailable", () => attempts.abandoned(attemptId))
    )
    if (Option.isNone(account)) {
      yield* fileRefusal("sign_in_failed", key)
      return yield* new InvalidCredentials()
    }
    yield* attempts.succeeded(attemptId, key)
    const usable = usableMemberships(account.value, null)
    if (usable.length === 0 && account.value.memberships.length > 0) {
      return yield* new SsoRequired({ tenantSlugs: account.value.memberships.map((m) => m.tenantSlug) })
    }
    return yield* openSession(account.value, {
      // Opened with the password just checked, so never older than it: provisioning's clock may run
      // ahead of this one, and a sign-in right after the password was set must not end at once.
      createdAtMs: Math.max(nowMs, account.value.passwordSetAtMs ?? nowMs),
      nowMs,
      ssoTenantId: null
    })
  })

/**
 * A new session (never one the browser brought) for an account whose sign-in succeeded, in the
 * workspace it has if it has one only, and `sign_in` in the log of each of its tenants.
 */
export const openSession = (
  account: MemberAccount,
  options: {
    readonly createdAtMs: number
    readonly nowMs: number
    readonly ssoTenantId: string | null
    readonly detail?: Readonly<Record<string, string>>
  }
) =>
  Effect.gen(function*() {
    const origin = yield* CurrentOrigin
    const { email, subject } = account
    const memberships = usableMemberships(account, options.ssoTenantId)
    if (memberships.length === 0) return yield* new NoWorkspace()
    const sessionId = newSecret()
    yield* (yield* SessionRepository).create({
      idHash: sessionIdHash(sessionId),
      userSub: subject,
      email,
      tenantId: memberships.length === 1 ? memberships[0]!.tenantId : null,
      ssoTenantId: options.ssoTenantId,
      csrfToken: newSecret(),
      createdAtMs: options.createdAtMs,
      lastSeenAtMs: options.nowMs,
      ip: origin.ip,
      userAgent: origin.userAgent
    })
    yield* recordSecurityEvent({
      action: "sign_in",
      tenantIds: memberships.map((m) => m.tenantId),
      actorSub: subject,
      actorEmail: email,
      ...(options.detail === undefined ? {} : { detail: options.detail })
    })
    return { sessionId, mustChooseTenant: memberships.length > 1 } satisfies SignedIn
  })

/**
 * The member behind a session cookie, re-read from provisioning on every page: a removed member
 * or one whose role changed gets no page on what the session remembered. An expired session, one
 * whose workspace the person left, or one opened before the account's password was last set (a
 * password changes to shut out whoever knew the old one), is removed.
 */
export const currentMember = (sessionId: string) =>
  Effect.gen(function*() {
    const sessions = yield* SessionRepository
    const settings = yield* ConsoleSettings
    const idHash = sessionIdHash(sessionId)
    const found = yield* sessions.find(idHash)
    if (Option.isNone(found)) return Option.none<Member>()
    const session = found.value
    const nowMs = yield* Clock.currentTimeMillis
    if (nowMs >= sessionEndMs(settings.session, session.createdAtMs, session.lastSeenAtMs)) {
      yield* sessions.remove(idHash)
      return Option.none<Member>()
    }
    // Read as this session may use it: a workspace whose single sign-on became required since a
    // password opened the session is gone from it from the next page on.
    const account = Option.map(yield* (yield* DirectoryDesk).account(session.userSub), (a) => ({
      ...a,
      memberships: usableMemberships(a, session.ssoTenantId)
    }))
    const membership = Option.flatMap(account, (a) => Option.fromNullishOr(a.memberships.find((m) => m.tenantId === session.tenantId)))
    const left = Option.isNone(account) || account.value.memberships.length === 0 || (session.tenantId !== null && Option.isNone(membership))
    const passwordChanged = Option.exists(account, (a) => a.passwordSetAtMs !== null && session.createdAtMs < a.passwordSetAtMs)
    if (left || passwordChanged) {
      yield* sessions.remove(idHash)
      return Option.none<Member>()
    }
    if (shouldTouch(session.lastSeenAtMs, nowMs)) yield* sessions.touch(idHash, nowMs)
    return Option.some<Member>({ session, account: Option.getOrThrow(account), membership })
  })

/** Whether a form's token is the session's. */
export const formTokenValid = (member: Member, given: string | undefined) => sameToken(given, member.session.csrfToken)

export const chooseTenant = (member: Member, tenantId: string) =>
  Effect.gen(function*() {
    if (!member.account.memberships.some((m) => m.tenantId === tenantId)) return false
    yield* (yield* SessionRepository).chooseTenant(member.session.idHash, tenantId)
    return true
  })

export const signOut = (member: Member) =>
  Effect.gen(function*() {
    yield* (yield* SessionRepository).remove(member.session.idHash)
    yield* recordSecurityEvent({
      action: "sign_out",
      tenantIds: Option.match(member.membership, { onNone: () => [null], onSome: (m) => [m.tenantId] }),
      actorSub: member.account.subject,
      actorEmail: member.account.email
    })
  })

/** A form whose token is not the session's: refused, and recorded, since it may be an attack. */
export const refuseForgedForm = (member: Member, path: string) =>
  recordSecurityEvent({
    action: "csrf_refused",
    tenantIds: Option.match(member.membership, { onNone: () => [null], onSome: (m) => [m.tenantId] }),
    actorSub: member.account.subject,
    actorEmail: member.account.email,
    detail: { path }
  })
