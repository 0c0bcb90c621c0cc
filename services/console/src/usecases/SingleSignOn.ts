import type { SsoConnectionRequest } from "@portfolio/domain"
import { Clock, Effect, Option } from "effect"
import { DirectoryDesk, type Membership } from "../ports/DirectoryDesk.js"
import { SsoDesk } from "../ports/SsoDesk.js"
import { actorOf, type Member, NoWorkspace, openSession, recordSecurityEvent } from "./SignIn.js"

/**
 * Sign-in through the tenant's own OpenID Provider (docs/console.md): provisioning holds the
 * connection, talks to the provider and checks what it answers; the console binds the attempt to
 * the browser, opens the session and keeps the log.
 */

/** Where to send the browser, and the state to bind to it: provisioning keeps the rest for 10 minutes. */
export const beginProviderSignIn = Effect.fn("beginProviderSignIn")(function*(slug: string) {
  return yield* (yield* DirectoryDesk).startSsoSignIn(slug)
})

/**
 * Files a sign-in through the provider that did not succeed. `inTenant`: in the log of the slug's
 * tenant, for its admins (a provider's or provisioning's refusal, which only a sign-in begun in this
 * browser reaches); otherwise under no tenant, for operators: a callback without the browser's
 * state costs nothing to send, and must not fill a tenant's log. Under no tenant too when
 * provisioning cannot say which tenant the slug is.
 */
export const refuseProviderSignIn = Effect.fn("refuseProviderSignIn")(function*(slug: string, reason: string, options: { readonly inTenant: boolean }) {
  const tenantId = !options.inTenant
    ? Option.none<string>()
    : yield* Effect.flatMap(DirectoryDesk, (directory) => directory.tenantIdOf(slug)).pipe(
      Effect.catchTag("UpstreamUnavailable", () => Effect.succeed(Option.none<string>()))
    )
  yield* recordSecurityEvent({
    action: "sso_sign_in_refused",
    tenantIds: [Option.getOrNull(tenantId)],
    actorSub: null,
    actorEmail: "",
    target: slug,
    detail: { reason }
  })
})

/**
 * The browser back from the provider, its state already checked against the one bound to it: a
 * session as a password sign-in opens one, or the refusal filed with provisioning's reason (a
 * removed member's too: their admins see them try to come back).
 */
export const finishProviderSignIn = Effect.fn("finishProviderSignIn")(function*(slug: string, state: string, callbackUrl: string) {
  const account = yield* (yield* DirectoryDesk).completeSsoSignIn(slug, state, callbackUrl).pipe(
    Effect.tapErrorTag("ProviderSignInRefused", (refused) => refuseProviderSignIn(slug, refused.reason, { inTenant: true })),
    Effect.tapErrorTag("RemovedMember", (removed) => refuseProviderSignIn(slug, removed.reason, { inTenant: true }))
  )
  const nowMs = yield* Clock.currentTimeMillis
  // No password was used: the session is as old as this sign-in, and a password set after it still ends it.
  const tenant = account.memberships.find((m) => m.tenantSlug === slug)
  if (tenant === undefined) return yield* new NoWorkspace()
  return yield* openSession(account, { createdAtMs: nowMs, nowMs, ssoTenantId: tenant.tenantId, detail: { method: "sso" } })
})

/** The workspaces whose provider signs in a work e-mail's domain: the sign-in page's "work e-mail" way in. */
export const providerWorkspacesOf = (email: string) => Effect.flatMap(DirectoryDesk, (directory) => directory.ssoTenantsForEmail(email))

/**
 * The tenant's connection to its provider, set by one of its tenant-admins (docs/console.md):
 * provisioning judges the member and the connection; the console records what was done, as for
 * its other admin pages, and provisioning does not record it again.
 */
const logConnectionChange = (member: Member, membership: Membership, action: "sso_connection_set" | "sso_connection_disabled", detail: Readonly<Record<string, string>> = {}) =>
  recordSecurityEvent({ tenantIds: [membership.tenantId], actorSub: member.account.subject, actorEmail: member.account.email, action, target: null, detail })

/** The tenant's connection; none when it has none. */
export const tenantSsoConnection = Effect.fn("tenantSsoConnection")(function*(member: Member, membership: Membership) {
  return yield* (yield* SsoDesk).get(actorOf(member, membership))
})

export const setTenantSsoConnection = Effect.fn("setTenantSsoConnection")(function*(member: Member, membership: Membership, request: SsoConnectionRequest) {
  const saved = yield* (yield* SsoDesk).set(actorOf(member, membership), request)
  // What provisioning records for an operator's change, so that the merged log reads alike whoever made it; never the secret.
  yield* logConnectionChange(member, membership, "sso_connection_set", {
    issuer: saved.issuer,
    clientId: saved.clientId,
    domains: saved.domains.join(","),
    required: String(saved.required)
  })
  return saved
})

export const disableTenantSsoConnection = Effect.fn("disableTenantSsoConnection")(function*(member: Member, membership: Membership) {
  yield* (yield* SsoDesk).disable(actorOf(member, membership))
  yield* logConnectionChange(member, membership, "sso_connection_disabled")
})
