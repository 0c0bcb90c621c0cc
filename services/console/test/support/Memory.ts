import { ApprovedPatRequest, ArbRole, CreatedPat, PartnerClient, PartnerClientWithSecret, type DeliveryAttempt, Invitation, Member as TenantMember, PatRequest, PatRequestDecider, PatRequestLifetimeDays, PatSummary, RevokedPat, ScimToken, ScimTokensPerTenantMax, ScimTokenWithSecret, type SecurityEvent, SsoConnection, type SsoConnectionRequest, WebhookDelivery, WebhookSubscription, WebhookSubscriptionWithSecret, widestScopeOf } from "@portfolio/domain"
import { SecurityLog } from "@portfolio/platform/security"
import { securityLogIn } from "@portfolio/platform/testing"
import { LockoutNotices } from "../../src/usecases/LockoutNotices.js"
import { Context, DateTime, Effect, Layer, Option, Redacted, Ref } from "effect"
import { randomUUID } from "node:crypto"
import { ConsoleSettings, type ConsoleSettingsShape } from "../../src/Config.js"
import { admitAttempt } from "../../src/domain/SignInRules.js"
import { DirectoryDesk, type MemberAccount, NoSsoConnection, ProviderSignInRefused, RemovedMember, UpstreamUnavailable } from "../../src/ports/DirectoryDesk.js"
import { type SessionRecord, SessionRepository } from "../../src/ports/SessionRepository.js"
import { SignInAttempts } from "../../src/ports/SignInAttempts.js"
import { type Actor, Refused, RequestsPageSize, TokenDesk } from "../../src/ports/TokenDesk.js"
import { WebhookDesk } from "../../src/ports/WebhookDesk.js"
import { MemberDesk } from "../../src/ports/MemberDesk.js"
import { GatewayLogDesk } from "../../src/ports/GatewayLogDesk.js"
import { PartnerDesk } from "../../src/ports/PartnerDesk.js"
import { ScimTokenDesk } from "../../src/ports/ScimTokenDesk.js"
import { SsoDesk } from "../../src/ports/SsoDesk.js"

export interface Person {
  readonly account: MemberAccount
  readonly password: string
}

interface Pat {
  readonly summary: PatSummary
  readonly tenantId: string
  readonly userSub: string
  revoked: boolean
}

/**
 * What the tenant's provider and provisioning make of a code the browser brings back: the person
 * it signs in, or provisioning's refusal (401) or removed member (409), with its detail.
 */
export type SsoOutcome =
  | { readonly _tag: "SignsIn"; readonly subject: string }
  | { readonly _tag: "Refused"; readonly reason: string }
  | { readonly _tag: "Removed"; readonly reason: string }

export interface World {
  people: Array<Person>
  /** The slugs of the tenants with a single sign-on connection. */
  ssoTenants: Array<string>
  /** The states provisioning gave out, each good for one completion. */
  ssoStates: Array<{ readonly slug: string; readonly state: string; used: boolean }>
  /** What each code the provider hands out comes to. */
  ssoCodes: Map<string, SsoOutcome>
  /** Every completion provisioning was asked for, as asked. */
  ssoCompletions: Array<{ readonly slug: string; readonly state: string; readonly callbackUrl: string }>
  directoryDown: boolean
  /** Every password check the directory was asked for, so that tests count them. */
  passwordChecks: number
  sessions: Map<string, SessionRecord>
  attempts: Array<{ id: string; emailKey: string; ip: string; atMs: number }>
  events: Array<SecurityEvent>
  requests: Array<PatRequest>
  pats: Array<Pat>
  /** Who each gateway call was made for, in order. */
  gatewayCalls: Array<{ readonly op: string; readonly actor: Actor }>
  subscriptions: Array<WebhookSubscription>
  secrets: Map<string, string>
  deliveries: Array<WebhookDelivery>
  deliveryAttempts: Array<DeliveryAttempt>
  invitations: Array<Invitation & { readonly tenantId: string }>
  partnerClients: Array<PartnerClient>
  partnerSecrets: Map<string, string>
  /** SCIM tokens in the order they were made, and each one's token by id. */
  scimTokens: Array<ScimToken>
  scimSecrets: Map<string, string>
  /** What provisioning recorded itself (acceptances). */
  provisioningEvents: Array<SecurityEvent>
  gatewayEvents: Array<SecurityEvent>
  /** Who each provisioning members call was made for. */
  memberCalls: Array<{ readonly op: string; readonly actor: Actor }>
  /** Who each dispatcher call was made for, and on what. */
  dispatcherCalls: Array<{ readonly op: string; readonly actor: Actor; readonly id?: string }>
  /** The tenants' single sign-on connections, by tenant id, as provisioning would answer them. */
  ssoConnections: Map<string, SsoConnection>
  /** Every connection provisioning was asked to set, as asked (the secret included). */
  ssoRequests: Array<{ readonly actor: Actor; readonly request: SsoConnectionRequest }>
}

export class MemoryWorld extends Context.Service<MemoryWorld, Ref.Ref<World>>()("console-test/MemoryWorld") {}

export const testSettings = (overrides: Partial<ConsoleSettingsShape> = {}): ConsoleSettingsShape => ({
  consoleUrl: new URL("http://console.test/console"),
  publicApiUrl: "http://api.test/api/v1",
  session: { absoluteMs: 8 * 3_600_000, idleMs: 30 * 60_000 },
  lockout: { maxFailuresPerEmail: 5, maxFailuresPerAddress: 50, windowMs: 15 * 60_000 },
  trustedProxyHops: 0,
  gatewayAdminUrl: "http://gateway-admin.test",
  provisioningAdminUrl: "http://provisioning-admin.test",
  webhookAdminUrl: "http://webhook-admin.test",
  ...overrides
})

const now = Effect.map(DateTime.now, (d) => d)

/** Whether an entry is in a page that starts at `since`. */
const from = (since: DateTime.Utc | undefined) => (e: SecurityEvent) => since === undefined || !DateTime.isLessThan(e.at, since)

const memoryPorts = Effect.gen(function*() {
  const world = yield* MemoryWorld
  const get = Ref.get(world)
  const directory = DirectoryDesk.of({
    checkSignIn: (email, password) =>
      Effect.gen(function*() {
        const w = yield* get
        if (w.directoryDown) return yield* new UpstreamUnavailable({ reason: "down" })
        w.passwordChecks++
        const person = w.people.find((p) => p.account.email.toLowerCase() === email.toLowerCase())
        return person !== undefined && person.password === Redacted.value(password) ? Option.some(person.account) : Option.none()
      }),
    account: (subject) =>
      Effect.gen(function*() {
        const w = yield* get
        if (w.directoryDown) return yield* new UpstreamUnavailable({ reason: "down" })
        return Option.fromNullishOr(w.people.find((p) => p.account.subject === subject)?.account)
      }),
    failedSignInTenants: (email) =>
      Effect.gen(function*() {
        const w = yield* get
        if (w.directoryDown) return yield* new UpstreamUnavailable({ reason: "down" })
        const person = w.people.find((p) => p.account.email.toLowerCase() === email.toLowerCase())
        return person === undefined ? [] : person.account.memberships.map((m) => m.tenantId)
      }),
    ssoTenantsForEmail: (email) =>
      Effect.gen(function*() {
        const w = yield* get
        if (w.directoryDown) return yield* new UpstreamUnavailable({ reason: "down" })
        const domain = email.slice(email.lastIndexOf("@") + 1).toLowerCase()
        // In this world a workspace's provider signs in the domain of its slug (acme.test for acme), and shared.test.
        return w.ssoTenants.filter((slug) => `${slug}.test` === domain || domain === "shared.test").sort()
      }),
    tenantIdOf: (slug) =>
      Effect.gen(function*() {
        const w = yield* get
        if (w.directoryDown) return yield* new UpstreamUnavailable({ reason: "down" })
        return Option.fromNullishOr(w.people.flatMap((p) => p.account.memberships).find((m) => m.tenantSlug === slug)?.tenantId)
      }),
    startSsoSignIn: (slug) =>
      Effect.gen(function*() {
        const w = yield* get
        if (w.directoryDown) return yield* new UpstreamUnavailable({ reason: "down" })
        if (!w.ssoTenants.includes(slug)) return yield* new NoSsoConnection()
        const state = randomUUID()
        w.ssoStates.push({ slug, state, used: false })
        const redirectUri = `http://console.test/console/sso/${slug}/callback`
        return { authorizationUrl: `https://idp.test/authorize?client_id=portfolio&state=${state}&redirect_uri=${encodeURIComponent(redirectUri)}`, state }
      }),
    // Provisioning's checks, as far as the console relies on them: a state it gave out for that
    // tenant, used once, and what the provider's code comes to.
    completeSsoSignIn: (slug, state, callbackUrl) =>
      Effect.gen(function*() {
        const w = yield* get
        if (w.directoryDown) return yield* new UpstreamUnavailable({ reason: "down" })
        w.ssoCompletions.push({ slug, state, callbackUrl })
        if (!w.ssoTenants.includes(slug)) return yield* new NoSsoConnection()
        const issued = w.ssoStates.find((s) => s.slug === slug && s.state === state)
        if (issued === undefined || issued.used) return yield* new ProviderSignInRefused({ reason: "unknown, expired or used state" })
        issued.used = true
        const url = new URL(callbackUrl)
        if (url.searchParams.get("state") !== state) return yield* new ProviderSignInRefused({ reason: "the callback's state is not the one given" })
        const outcome = w.ssoCodes.get(url.searchParams.get("code") ?? "")
        if (outcome === undefined) return yield* new ProviderSignInRefused({ reason: "the provider refused the code" })
        if (outcome._tag === "Refused") return yield* new ProviderSignInRefused({ reason: outcome.reason })
        if (outcome._tag === "Removed") return yield* new RemovedMember({ reason: outcome.reason })
        const person = w.people.find((p) => p.account.subject === outcome.subject)
        if (person === undefined) return yield* Effect.die(new Error(`no person ${outcome.subject} in the test's world`))
        return person.account
      }),
    securityEvents: (tenantId, { limit, since }) =>
      Effect.gen(function*() {
        const w = yield* get
        if (w.directoryDown) return yield* new UpstreamUnavailable({ reason: "down" })
        return w.provisioningEvents.filter((e) => e.tenantId === tenantId && from(since)(e)).slice(0, limit)
      })
  })
  const sessions = SessionRepository.of({
    create: (s) => Effect.map(get, (w) => void w.sessions.set(s.idHash, s)),
    find: (idHash) => Effect.map(get, (w) => Option.fromNullishOr(w.sessions.get(idHash))),
    touch: (idHash, atMs) =>
      Effect.map(get, (w) => {
        const s = w.sessions.get(idHash)
        if (s !== undefined) w.sessions.set(idHash, { ...s, lastSeenAtMs: atMs })
      }),
    chooseTenant: (idHash, tenantId) =>
      Effect.map(get, (w) => {
        const s = w.sessions.get(idHash)
        if (s !== undefined) w.sessions.set(idHash, { ...s, tenantId })
      }),
    remove: (idHash) => Effect.map(get, (w) => void w.sessions.delete(idHash))
  })
  const attempts = SignInAttempts.of({
    begin: (start, policy) =>
      Effect.map(get, (w) => {
        const recent = w.attempts.filter((a) => a.atMs > start.atMs - policy.windowMs)
        const byEmail = recent.filter((a) => a.emailKey === start.emailKey)
        const byIp = recent.filter((a) => a.ip === start.ip)
        const admission = admitAttempt(policy, {
          emailFailures: byEmail.length,
          latestEmailFailureMs: byEmail.at(-1)?.atMs,
          addressFailures: byIp.length,
          latestAddressFailureMs: byIp.at(-1)?.atMs
        }, start.atMs)
        if (admission._tag === "Locked") return { admission, attemptId: undefined }
        const id = randomUUID()
        w.attempts.push({ id, ...start })
        return { admission, attemptId: id }
      }),
    succeeded: (attemptId, emailKey) => Effect.map(get, (w) => void (w.attempts = w.attempts.filter((a) => a.id !== attemptId && a.emailKey !== emailKey))),
    abandoned: (attemptId) => Effect.map(get, (w) => void (w.attempts = w.attempts.filter((a) => a.id !== attemptId)))
  })
  const log = securityLogIn({ read: Effect.map(get, (w) => w.events), append: (entries) => Effect.map(get, (w) => void w.events.push(...entries)) })
  // The gateway's rules that the console relies on (docs/product-rules.md#pat-requests), kept small.
  const desk = TokenDesk.of({
    file: (actor, request) =>
      Effect.gen(function*() {
        const w = yield* get
        w.gatewayCalls.push({ op: "file", actor })
        if (request.scope === "write" && widestScopeOf(actor.role) === "read") {
          return yield* new Refused({ status: 400, detail: `a ${actor.role} may request a read token only` })
        }
        const filed = PatRequest.make({
          id: randomUUID(),
          tenantId: actor.tenantId,
          userSub: actor.userSub,
          email: actor.email,
          role: actor.role,
          scope: request.scope,
          days: request.days,
          justification: request.justification,
          status: "pending",
          createdAt: yield* now,
          expiresAt: DateTime.add(yield* now, { days: PatRequestLifetimeDays }),
          decidedAt: null,
          decidedBy: null,
          reason: null,
          patId: null
        })
        w.requests.push(filed)
        return filed
      }),
    // Pages as the gateway's do, newest first, with a cursor of its own: "after:<id>".
    requests: (actor, filter, cursor) =>
      Effect.gen(function*() {
        const w = yield* get
        w.gatewayCalls.push({ op: "requests", actor })
        const all = w.requests.filter((r) =>
          r.tenantId === actor.tenantId && (filter.status === undefined || r.status === filter.status) && (filter.userSub === undefined || r.userSub === filter.userSub)
        ).reverse()
        const from = cursor === undefined ? 0 : all.findIndex((r) => `after:${r.id}` === cursor) + 1
        if (from === 0 && cursor !== undefined) return yield* new Refused({ status: 400, detail: "invalid cursor" })
        const items = all.slice(from, from + RequestsPageSize)
        return { items, next: from + RequestsPageSize < all.length ? Option.some(`after:${items[items.length - 1]!.id}`) : Option.none() }
      }),
    approve: (actor, requestId) =>
      Effect.gen(function*() {
        const w = yield* get
        w.gatewayCalls.push({ op: "approve", actor })
        const index = w.requests.findIndex((r) => r.id === requestId && r.tenantId === actor.tenantId)
        if (index === -1) return yield* new Refused({ status: 404, detail: "No such request." })
        const request = w.requests[index]!
        if (request.status !== "pending") return yield* new Refused({ status: 409, detail: "The request is already decided." })
        if (request.userSub === actor.userSub) return yield* new Refused({ status: 403, detail: "An admin cannot decide their own request." })
        const at = yield* now
        const pat = CreatedPat.make({
          id: randomUUID(),
          token: `pat_test_${randomUUID().replaceAll("-", "")}`,
          tokenPrefix: "pat_test_a",
          scope: request.scope,
          expiresAt: DateTime.add(at, { days: request.days })
        })
        const decided = PatRequest.make({
          ...request,
          status: "approved",
          decidedAt: at,
          decidedBy: PatRequestDecider.make({ userSub: actor.userSub, email: actor.email, role: actor.role }),
          patId: pat.id
        })
        w.requests[index] = decided
        w.pats.push({
          summary: PatSummary.make({ id: pat.id, tokenPrefix: pat.tokenPrefix, scope: pat.scope, createdAt: at, expiresAt: pat.expiresAt, lastUsedAt: null }),
          tenantId: request.tenantId,
          userSub: request.userSub,
          revoked: false
        })
        return ApprovedPatRequest.make({ request: decided, pat })
      }),
    deny: (actor, requestId, reason) =>
      Effect.gen(function*() {
        const w = yield* get
        w.gatewayCalls.push({ op: "deny", actor })
        const index = w.requests.findIndex((r) => r.id === requestId && r.tenantId === actor.tenantId)
        if (index === -1) return yield* new Refused({ status: 404, detail: "No such request." })
        const decided = PatRequest.make({
          ...w.requests[index]!,
          status: "denied",
          decidedAt: yield* now,
          decidedBy: PatRequestDecider.make({ userSub: actor.userSub, email: actor.email, role: actor.role }),
          reason
        })
        w.requests[index] = decided
        return decided
      }),
    tokens: (actor) =>
      Effect.map(get, (w) => {
        w.gatewayCalls.push({ op: "tokens", actor })
        return w.pats.filter((p) => !p.revoked && p.tenantId === actor.tenantId && p.userSub === actor.userSub).map((p) => p.summary)
      }),
    revoke: (actor, patId) =>
      Effect.gen(function*() {
        const w = yield* get
        w.gatewayCalls.push({ op: "revoke", actor })
        const pat = w.pats.find((p) => p.summary.id === patId && !p.revoked && p.tenantId === actor.tenantId && p.userSub === actor.userSub)
        if (pat === undefined) return yield* new Refused({ status: 404, detail: "No such token." })
        pat.revoked = true
        return RevokedPat.make({ id: patId, revokedAt: yield* now })
      })
  })
  // The dispatcher as the console sees it: reached by id whatever the tenant, as the real one is.
  const webhooks = WebhookDesk.of({
    list: (actor) =>
      Effect.map(get, (w) => {
        w.dispatcherCalls.push({ op: "list", actor })
        return w.subscriptions.filter((s) => s.tenantId === actor.tenantId)
      }),
    create: (actor, draft) =>
      Effect.gen(function*() {
        const w = yield* get
        w.dispatcherCalls.push({ op: "create", actor })
        if (!draft.url.startsWith("https://")) return yield* new Refused({ status: 400, detail: "the URL must be https" })
        const at = yield* now
        const created = WebhookSubscription.make({
          id: randomUUID(),
          tenantId: actor.tenantId,
          url: draft.url,
          description: draft.description,
          events: draft.events.length === 0 ? ["application.created", "application.updated", "das.submitted"] : [...draft.events],
          allEvents: draft.events.length === 0,
          state: "enabled",
          disabledReason: null,
          consecutiveFailures: 0,
          previousSecretExpiresAt: null,
          createdAt: at,
          updatedAt: at
        })
        const secret = `whsec_${Buffer.from(randomUUID()).toString("base64")}`
        w.subscriptions.push(created)
        w.secrets.set(created.id, secret)
        return WebhookSubscriptionWithSecret.make({ ...created, secret })
      }),
    get: (actor, id) =>
      Effect.map(get, (w) => {
        w.dispatcherCalls.push({ op: "get", actor, id })
        return Option.fromNullishOr(w.subscriptions.find((s) => s.id === id))
      }),
    update: (actor, id, draft) =>
      Effect.gen(function*() {
        const w = yield* get
        w.dispatcherCalls.push({ op: "update", actor, id })
        const index = w.subscriptions.findIndex((s) => s.id === id)
        const updated = WebhookSubscription.make({
          ...w.subscriptions[index]!,
          url: draft.url,
          description: draft.description,
          events: draft.events.length === 0 ? w.subscriptions[index]!.events : [...draft.events],
          allEvents: draft.events.length === 0 ? w.subscriptions[index]!.allEvents : false
        })
        w.subscriptions[index] = updated
        return updated
      }),
    setEnabled: (actor, id, enabled) =>
      Effect.map(get, (w) => {
        w.dispatcherCalls.push({ op: enabled ? "enable" : "disable", actor, id })
        const index = w.subscriptions.findIndex((s) => s.id === id)
        const changed = WebhookSubscription.make({ ...w.subscriptions[index]!, state: enabled ? "enabled" : "disabled", disabledReason: enabled ? null : "manual" })
        w.subscriptions[index] = changed
        return changed
      }),
    rotateSecret: (actor, id, graceSeconds) =>
      Effect.gen(function*() {
        const w = yield* get
        w.dispatcherCalls.push({ op: "rotate", actor, id })
        const index = w.subscriptions.findIndex((s) => s.id === id)
        const rotated = WebhookSubscription.make({ ...w.subscriptions[index]!, previousSecretExpiresAt: DateTime.add(yield* now, { seconds: graceSeconds }) })
        w.subscriptions[index] = rotated
        const secret = `whsec_${Buffer.from(randomUUID()).toString("base64")}`
        w.secrets.set(id, secret)
        return WebhookSubscriptionWithSecret.make({ ...rotated, secret })
      }),
    deliveries: (actor, id, limit) =>
      Effect.map(get, (w) => {
        w.dispatcherCalls.push({ op: "deliveries", actor, id })
        return w.deliveries.filter((d) => d.subscriptionId === id).slice(0, limit)
      }),
    attempts: (actor, deliveryId) =>
      Effect.map(get, (w) => {
        w.dispatcherCalls.push({ op: "attempts", actor, id: deliveryId })
        return w.deliveryAttempts.filter((a) => a.deliveryId === deliveryId)
      }),
    redeliver: (actor, deliveryId) =>
      Effect.gen(function*() {
        const w = yield* get
        w.dispatcherCalls.push({ op: "redeliver", actor, id: deliveryId })
        const index = w.deliveries.findIndex((d) => d.id === deliveryId)
        if (w.deliveries[index]!.status === "pending") return yield* new Refused({ status: 409, detail: "The delivery is still being attempted." })
        const again = WebhookDelivery.make({ ...w.deliveries[index]!, status: "pending", failureReason: null, nextAttemptAt: yield* now })
        w.deliveries[index] = again
        return again
      }),
    recover: (actor, id) =>
      Effect.map(get, (w) => {
        w.dispatcherCalls.push({ op: "recover", actor, id })
        return w.deliveries.filter((d) => d.subscriptionId === id && d.status === "failed").length
      })
  })
  // Provisioning's rules as far as the console relies on them: the actor's role is read from the
  // records (never from the console), tenant-admins only, one pending invitation per e-mail, the
  // last admin stays.
  const recordedRole = (w: World, actor: Actor) =>
    w.people.find((p) => p.account.subject === actor.userSub)?.account.memberships.find((m) => m.tenantId === actor.tenantId)?.role
  const asAdmin = (op: string, actor: Actor) =>
    Effect.gen(function*() {
      const w = yield* get
      w.memberCalls.push({ op, actor })
      const role = recordedRole(w, actor)
      if (role === undefined) return yield* new Refused({ status: 401, detail: "You are not a member of this tenant." })
      if (role !== "tenant-admin") return yield* new Refused({ status: 403, detail: `This requires tenant-admin; you are ${role}.` })
      return w
    })
  const membersOf = (w: World, tenantId: string) =>
    w.people.flatMap((p) =>
      p.account.memberships.filter((m) => m.tenantId === tenantId).map((m) =>
        TenantMember.make({ userSub: p.account.subject, userEmail: p.account.email, arbRole: m.role, source: "INVITATION", grantedAt: DateTime.makeUnsafe(0) })
      )
    )
  const memberDesk = MemberDesk.of({
    members: (actor) => Effect.map(asAdmin("members", actor), (w) => membersOf(w, actor.tenantId)),
    invitations: (actor) => Effect.map(asAdmin("invitations", actor), (w) => w.invitations.filter((i) => i.tenantId === actor.tenantId)),
    invite: (actor, email, arbRole) =>
      Effect.gen(function*() {
        const w = yield* asAdmin("invite", actor)
        if (!ArbRole.literals.includes(arbRole as ArbRole)) return yield* new Refused({ status: 400, detail: `Unknown role ${arbRole}.` })
        if (w.invitations.some((i) => i.tenantId === actor.tenantId && i.status === "PENDING" && i.email.toLowerCase() === email.toLowerCase())) {
          return yield* new Refused({ status: 409, detail: `${email} already has a pending invitation.` })
        }
        const at = yield* now
        const invitation = Invitation.make({
          id: randomUUID(),
          email,
          arbRole: arbRole as ArbRole,
          status: "PENDING",
          invitedByEmail: actor.email,
          expiresAt: DateTime.add(at, { days: 7 }),
          createdAt: at,
          acceptedAt: null,
          revokedAt: null
        })
        w.invitations.push(Object.assign(invitation, { tenantId: actor.tenantId }))
        return invitation
      }),
    revokeInvitation: (actor, id) =>
      Effect.gen(function*() {
        const w = yield* asAdmin("revoke", actor)
        const index = w.invitations.findIndex((i) => i.id === id && i.tenantId === actor.tenantId && i.status === "PENDING")
        if (index === -1) return yield* new Refused({ status: 404, detail: "No such pending invitation." })
        w.invitations[index] = Object.assign(Invitation.make({ ...w.invitations[index]!, status: "REVOKED", revokedAt: yield* now }), { tenantId: actor.tenantId })
      }),
    removeMember: (actor, userSub) =>
      Effect.gen(function*() {
        const w = yield* asAdmin("remove", actor)
        const person = w.people.find((p) => p.account.subject === userSub && p.account.memberships.some((m) => m.tenantId === actor.tenantId))
        if (person === undefined) return yield* new Refused({ status: 404, detail: "No such member." })
        const admins = membersOf(w, actor.tenantId).filter((m) => m.arbRole === "tenant-admin")
        if (admins.length === 1 && admins[0]!.userSub === userSub) return yield* new Refused({ status: 409, detail: "The last tenant-admin cannot be removed." })
        ;(person.account as { memberships: unknown }).memberships = person.account.memberships.filter((m) => m.tenantId !== actor.tenantId)
      })
  })
  // The gateway's partner clients: reached by id whatever the tenant, as the real ones are.
  const newPartnerSecret = () => `ap_cs_${randomUUID().replaceAll("-", "")}`
  const partnerDesk = PartnerDesk.of({
    list: (actor) =>
      Effect.map(get, (w) => {
        w.dispatcherCalls.push({ op: "partners", actor })
        return w.partnerClients.filter((c) => c.tenantId === actor.tenantId)
      }),
    create: (actor, name, scope) =>
      Effect.gen(function*() {
        const w = yield* get
        w.dispatcherCalls.push({ op: "partner-create", actor })
        const clientId = `service-partner-${name}`
        if (w.partnerClients.some((c) => c.clientId === clientId)) return yield* new Refused({ status: 409, detail: `${clientId} exists already.` })
        const at = yield* now
        const client = PartnerClient.make({ clientId, tenantId: actor.tenantId, name, scope, state: "enabled", previousSecretExpiresAt: null, createdAt: at, updatedAt: at })
        w.partnerClients.push(client)
        const clientSecret = newPartnerSecret()
        w.partnerSecrets.set(clientId, clientSecret)
        return PartnerClientWithSecret.make({ ...client, clientSecret })
      }),
    rotateSecret: (actor, clientId, graceSeconds) =>
      Effect.gen(function*() {
        const w = yield* get
        w.dispatcherCalls.push({ op: "partner-rotate", actor, id: clientId })
        const index = w.partnerClients.findIndex((c) => c.clientId === clientId)
        const rotated = PartnerClient.make({ ...w.partnerClients[index]!, previousSecretExpiresAt: DateTime.add(yield* now, { seconds: graceSeconds }) })
        w.partnerClients[index] = rotated
        const clientSecret = newPartnerSecret()
        w.partnerSecrets.set(clientId, clientSecret)
        return PartnerClientWithSecret.make({ ...rotated, clientSecret })
      }),
    setEnabled: (actor, clientId, enabled) =>
      Effect.map(get, (w) => {
        w.dispatcherCalls.push({ op: enabled ? "partner-enable" : "partner-disable", actor, id: clientId })
        const index = w.partnerClients.findIndex((c) => c.clientId === clientId)
        const changed = PartnerClient.make({ ...w.partnerClients[index]!, state: enabled ? "enabled" : "disabled" })
        w.partnerClients[index] = changed
        return changed
      })
  })
  // The gateway's SCIM tokens (docs/scim.md): kept under their tenant, at most 2 active in each.
  const scimDesk = ScimTokenDesk.of({
    list: (actor) =>
      Effect.map(get, (w) => {
        w.gatewayCalls.push({ op: "scim-tokens", actor })
        const ofTenant = w.scimTokens.filter((t) => t.tenantId === actor.tenantId).reverse()
        return [...ofTenant.filter((t) => t.revokedAt === null), ...ofTenant.filter((t) => t.revokedAt !== null)]
      }),
    create: (actor, label) =>
      Effect.gen(function*() {
        const w = yield* get
        w.gatewayCalls.push({ op: "scim-create", actor })
        const active = w.scimTokens.filter((t) => t.tenantId === actor.tenantId && t.revokedAt === null)
        if (active.length >= ScimTokensPerTenantMax) return yield* new Refused({ status: 409, detail: "At most 2 active SCIM tokens per tenant." })
        const token = `ap_scim_${randomUUID().replaceAll("-", "").slice(0, 30)}abcdef`
        const made = ScimToken.make({
          id: randomUUID(),
          tenantId: actor.tenantId,
          label,
          tokenPrefix: token.slice(0, 11),
          createdBy: `console:${actor.email}`,
          createdAt: yield* now,
          lastUsedAt: null,
          revokedAt: null
        })
        w.scimTokens.push(made)
        w.scimSecrets.set(made.id, token)
        return ScimTokenWithSecret.make({ ...made, token })
      }),
    revoke: (actor, id) =>
      Effect.gen(function*() {
        const w = yield* get
        w.gatewayCalls.push({ op: "scim-revoke", actor })
        const index = w.scimTokens.findIndex((t) => t.id === id && t.tenantId === actor.tenantId)
        if (index === -1) return yield* new Refused({ status: 404, detail: "No such SCIM token." })
        const revoked = ScimToken.make({ ...w.scimTokens[index]!, revokedAt: yield* now })
        w.scimTokens[index] = revoked
        return revoked
      })
  })
  // Provisioning's single sign-on doors as far as the console relies on them: tenant-admins only (the
  // records' role), an issuer that must be https and whose discovery may fail, a 404 without a connection.
  const noConnection = (slug: string) => new Refused({ status: 404, detail: `The tenant '${slug}' has no single sign-on connection.` })
  const slugOf = (w: World, tenantId: string) => w.people.flatMap((p) => p.account.memberships).find((m) => m.tenantId === tenantId)?.tenantSlug ?? "unknown"
  const ssoDesk = SsoDesk.of({
    get: (actor) => Effect.map(asAdmin("sso-get", actor), (w) => Option.fromNullishOr(w.ssoConnections.get(actor.tenantId))),
    set: (actor, request) =>
      Effect.gen(function*() {
        const w = yield* asAdmin("sso-set", actor)
        w.ssoRequests.push({ actor, request })
        const url = new URL(request.issuer)
        if (url.protocol !== "https:") return yield* new Refused({ status: 400, detail: "The issuer must be https (plain http only on a loopback address)." })
        if (url.hostname === "unreachable.test") {
          return yield* new Refused({ status: 400, detail: "The issuer cannot be used: its discovery document could not be reached (ENOTFOUND)." })
        }
        const at = yield* now
        const slug = slugOf(w, actor.tenantId)
        const connection = SsoConnection.make({
          tenantId: actor.tenantId,
          issuer: request.issuer,
          clientId: request.clientId,
          redirectUri: `http://console.test/console/sso/${slug}/callback`,
          domains: [...new Set(request.domains)],
          defaultRole: request.defaultRole,
          roleClaim: request.roleClaim,
          roleMap: request.roleMap,
          required: request.required,
          breakGlass: request.breakGlass.map((email) => email.toLowerCase()),
          domainsConfirmed: false,
          emailVerifiedClaim: request.emailVerifiedClaim,
          secretSetAt: at,
          updatedAt: at
        })
        w.ssoConnections.set(actor.tenantId, connection)
        if (!w.ssoTenants.includes(slug)) w.ssoTenants.push(slug)
        return connection
      }),
    disable: (actor) =>
      Effect.gen(function*() {
        const w = yield* asAdmin("sso-disable", actor)
        const slug = slugOf(w, actor.tenantId)
        if (!w.ssoConnections.delete(actor.tenantId)) return yield* noConnection(slug)
        w.ssoTenants = w.ssoTenants.filter((s) => s !== slug)
      })
  })
  return Layer.mergeAll(
    Layer.succeed(SsoDesk, ssoDesk),
    Layer.succeed(PartnerDesk, partnerDesk),
    Layer.succeed(ScimTokenDesk, scimDesk),
    Layer.succeed(GatewayLogDesk, GatewayLogDesk.of({
      securityEvents: (tenantId, { limit, since }) =>
        Effect.map(get, (w) => w.gatewayEvents.filter((e) => e.tenantId === tenantId && from(since)(e)).slice(0, limit))
    })),
    Layer.succeed(MemberDesk, memberDesk),
    Layer.succeed(WebhookDesk, webhooks),
    Layer.succeed(DirectoryDesk, directory),
    Layer.succeed(SessionRepository, sessions),
    Layer.succeed(SignInAttempts, attempts),
    Layer.succeed(SecurityLog, log),
    Layer.succeed(TokenDesk, desk)
  )
})

export const emptyWorld = (people: Array<Person> = []): World => ({
  people,
  ssoTenants: [],
  ssoStates: [],
  ssoCodes: new Map(),
  ssoCompletions: [],
  directoryDown: false,
  passwordChecks: 0,
  sessions: new Map(),
  attempts: [],
  events: [],
  requests: [],
  pats: [],
  gatewayCalls: [],
  subscriptions: [],
  secrets: new Map(),
  deliveries: [],
  deliveryAttempts: [],
  invitations: [],
  partnerClients: [],
  partnerSecrets: new Map(),
  scimTokens: [],
  scimSecrets: new Map(),
  provisioningEvents: [],
  gatewayEvents: [],
  memberCalls: [],
  dispatcherCalls: [],
  ssoConnections: new Map(),
  ssoRequests: []
})

/** Every port in memory over one world, which the test reads and changes through `MemoryWorld`. */
export const MemoryLayer = (people: Array<Person> = [], settings: Partial<ConsoleSettingsShape> = {}) =>
  Layer.unwrap(memoryPorts).pipe(
    Layer.merge(LockoutNotices.layer),
    Layer.provideMerge(Layer.effect(MemoryWorld, Ref.make(emptyWorld(people)))),
    Layer.provideMerge(Layer.succeed(ConsoleSettings, testSettings(settings)))
  )
