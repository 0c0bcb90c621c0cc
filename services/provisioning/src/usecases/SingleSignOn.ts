import { type ArbRole, Conflict, InvalidRequest, Member, MemberWasRemoved, NotFound, SsoConnection, type SsoConnectionRequest, SsoDomainTenants, SsoSignInStart, Unauthenticated, Unavailable } from "@portfolio/domain"
import { type RequestOrigin } from "@portfolio/platform/http"
import { UnitOfWork } from "@portfolio/platform/sql"
import { DateTime, Effect, Option } from "effect"
import { createHash } from "node:crypto"
import { ProvisioningSettings } from "../Config.js"
import { issuerProblem, redirectUriOf } from "../domain/SsoIssuer.js"
import { domainOf, roleFromClaims, SsoSignInLifetimeMs, verifiedBy } from "../domain/SsoSignIn.js"
import { type Account, IdentityProvider } from "../ports/IdentityProvider.js"
import { IssuerDiscovery } from "../ports/IssuerDiscovery.js"
import { MemberRepository } from "../ports/MemberRepository.js"
import { type SsoConnectionRecord, SsoConnectionRepository } from "../ports/SsoConnectionRepository.js"
import { type SsoClient, SsoRelyingParty } from "../ports/SsoRelyingParty.js"
import { SsoSignInRepository } from "../ports/SsoSignInRepository.js"
import { TenantRepository } from "../ports/TenantRepository.js"
import { identityOutage } from "./IdentityOutage.js"
import { getAccount } from "./SignIn.js"
import { recordSecurityEvent } from "./SecurityLog.js"
import { requireTenant } from "./Tenants.js"

const refused = (detail: string) => new InvalidRequest({ detail })

const toConnection = (record: SsoConnectionRecord, consoleUrl: string, slug: string) =>
  new SsoConnection({ ...record, redirectUri: redirectUriOf(consoleUrl, slug) })

/**
 * Sets a tenant's single sign-on connection whole (docs/security.md, "Single sign-on"). Nothing is
 * written unless every part holds: an issuer we accept whose discovery document names it, a role
 * map with the claim it reads and one role per value, break-glass accounts that are the tenant's
 * active admins (the only members a required sign-on leaves a password to).
 */
export const setSsoConnection = Effect.fn("setSsoConnection")(function*(
  slug: string,
  request: SsoConnectionRequest,
  actor: string,
  origin?: RequestOrigin,
  setBy: "operator" | "tenant-admin" = "operator"
) {
  const tenant = yield* requireTenant(slug)
  const settings = yield* ProvisioningSettings
  const problem = issuerProblem(request.issuer, { allowLoopbackHttp: settings.allowLoopbackIssuers })
  if (problem !== undefined) return yield* refused(`${problem[0]!.toUpperCase()}${problem.slice(1)}.`)
  if (request.roleMap.length > 0 && request.roleClaim === null) {
    return yield* refused("A role map needs the claim whose values it maps (roleClaim).")
  }
  const values = request.roleMap.map((mapping) => mapping.value)
  const repeated = values.find((value, index) => values.indexOf(value) !== index)
  if (repeated !== undefined) return yield* refused(`The role map names the value '${repeated}' twice.`)
  const members = yield* MemberRepository
  for (const email of request.breakGlass) {
    const member = yield* members.findActiveByEmail(tenant.id, email)
    if (Option.isNone(member) || member.value.arbRole !== "tenant-admin") {
      return yield* refused(`Break-glass accounts must be active tenant-admins of '${slug}': ${email} is not.`)
    }
  }
  const discovery = yield* IssuerDiscovery
  yield* discovery.discover(new URL(request.issuer), { allowHttp: settings.allowLoopbackIssuers }).pipe(
    Effect.catchTag("IssuerRefused", ({ reason }) => Effect.fail(refused(`The issuer cannot be used: ${reason}.`)))
  )
  const now = yield* DateTime.now
  const connections = yield* SsoConnectionRepository
  const domains = [...new Set(request.domains)]
  // A tenant-admin keeps the operator's confirmation only for domains it already covered.
  const previous = yield* connections.find(tenant.id)
  const domainsConfirmed = setBy === "operator" ||
    Option.exists(previous, (p) => p.domainsConfirmed && domains.every((domain) => p.domains.includes(domain)))
  const record: SsoConnectionRecord = {
    tenantId: tenant.id,
    issuer: request.issuer,
    clientId: request.clientId,
    domains,
    defaultRole: request.defaultRole,
    roleClaim: request.roleClaim,
    roleMap: request.roleMap.map(({ role, value }) => ({ value, role })),
    required: request.required,
    breakGlass: [...new Set(request.breakGlass.map((email) => email.toLowerCase()))],
    domainsConfirmed,
    emailVerifiedClaim: request.emailVerifiedClaim,
    secretSetAt: now,
    updatedAt: now
  }
  yield* (yield* UnitOfWork).run(Effect.gen(function*() {
    yield* connections.save(record, request.clientSecret)
    yield* recordSecurityEvent(origin, {
      tenantId: tenant.id,
      at: now,
      actorSub: actor,
      actorEmail: "",
      action: "sso_connection_set",
      target: null,
      detail: { issuer: record.issuer, clientId: record.clientId, domains: record.domains.join(","), required: String(record.required) }
    })
  }))
  return toConnection(record, settings.consoleUrl, slug)
})

const noConnection = (slug: string) => new NotFound({ detail: `The tenant '${slug}' has no single sign-on connection.` })

export const getSsoConnection = Effect.fn("getSsoConnection")(function*(slug: string) {
  const tenant = yield* requireTenant(slug)
  const settings = yield* ProvisioningSettings
  const found = yield* (yield* SsoConnectionRepository).find(tenant.id)
  if (Option.isNone(found)) return yield* noConnection(slug)
  return toConnection(found.value, settings.consoleUrl, slug)
})

/** Deletes the connection and its sealed secret: the tenant's people sign in with passwords again. */
export const disableSsoConnection = Effect.fn("disableSsoConnection")(function*(slug: string, actor: string, origin?: RequestOrigin) {
  const tenant = yield* requireTenant(slug)
  const connections = yield* SsoConnectionRepository
  yield* (yield* UnitOfWork).run(Effect.gen(function*() {
    if (!(yield* connections.remove(tenant.id))) return yield* noConnection(slug)
    yield* recordSecurityEvent(origin, {
      tenantId: tenant.id,
      at: yield* DateTime.now,
      actorSub: actor,
      actorEmail: "",
      action: "sso_connection_disabled",
      target: null,
      detail: {}
    })
  }))
})

/** The tenant's connection, with its client secret opened: what a sign-in through it needs. */
const clientOf = (slug: string) =>
  Effect.gen(function*() {
    const tenant = yield* requireTenant(slug)
    const settings = yield* ProvisioningSettings
    const connections = yield* SsoConnectionRepository
    const connection = yield* connections.find(tenant.id)
    if (Option.isNone(connection)) return yield* noConnection(slug)
    const secret = yield* connections.findClientSecret(tenant.id)
    // Sealed under an INTERNAL_SECRET this service no longer has: only setting the connection again mends it.
    if (Option.isNone(secret)) {
      return yield* new Unavailable({ detail: `The single sign-on connection of '${slug}' cannot be used: its client secret must be set again.` })
    }
    const client: SsoClient = {
      issuer: connection.value.issuer,
      clientId: connection.value.clientId,
      clientSecret: secret.value,
      redirectUri: redirectUriOf(settings.consoleUrl, slug),
      allowHttp: settings.allowLoopbackIssuers,
      roleClaim: connection.value.roleClaim
    }
    return { tenant, connection: connection.value, client }
  })

const stateHashOf = (state: string) => createHash("sha256").update(state).digest("base64url")

const providerAway = (reason: string) =>
  Effect.andThen(
    Effect.logWarning("a tenant's identity provider could not be reached", { reason }),
    Effect.fail(new Unavailable({ detail: "The identity provider could not be reached; try again shortly." }))
  )

/**
 * Begins a sign-in through the tenant's provider (docs/security.md, "Single sign-on"): a state, a
 * nonce and a PKCE verifier, kept here once for 10 minutes; the browser goes to the provider with
 * the state, the nonce and the verifier's challenge.
 */
export const startSsoSignIn = Effect.fn("startSsoSignIn")(function*(slug: string) {
  const { client, tenant } = yield* clientOf(slug)
  const begun = yield* (yield* SsoRelyingParty).begin(client).pipe(Effect.catchTag("ProviderUnreachable", ({ reason }) => providerAway(reason)))
  const now = yield* DateTime.now
  yield* (yield* SsoSignInRepository).save({
    stateHash: stateHashOf(begun.state),
    tenantId: tenant.id,
    nonce: begun.nonce,
    codeVerifier: begun.codeVerifier,
    expiresAt: DateTime.add(now, { milliseconds: SsoSignInLifetimeMs })
  }, now)
  return new SsoSignInStart({ authorizationUrl: begun.authorizationUrl, state: begun.state })
})

const signInRefused = (reason: string) => new Unauthenticated({ detail: reason })

/**
 * Ends a sign-in through the tenant's provider: the begun sign-in of this state taken (once), the
 * code exchanged and the id token checked, then the person's e-mail: verified by the provider and
 * of one of the connection's domains. Only then is their account found or made by that e-mail,
 * and on a first sign-in to the tenant a member made (source SSO_JIT, the role the claims map to).
 * A removed member is refused: removal is irreversible, only a new invitation brings them back.
 */
export const completeSsoSignIn = Effect.fn("completeSsoSignIn")(function*(slug: string, state: string, callbackUrl: string) {
  const { client, connection, tenant } = yield* clientOf(slug)
  const now = yield* DateTime.now
  const pending = yield* (yield* SsoSignInRepository).take(stateHashOf(state), tenant.id, now)
  if (Option.isNone(pending)) return yield* signInRefused("the sign-in's state is unknown, was used already or expired")
  if (!URL.canParse(callbackUrl)) return yield* signInRefused("the callback URL is not a URL")
  const identity = yield* (yield* SsoRelyingParty).finish(client, new URL(callbackUrl), {
    state,
    nonce: pending.value.nonce,
    codeVerifier: pending.value.codeVerifier
  }).pipe(
    Effect.catchTags({
      SsoCheckFailed: ({ reason }) => Effect.fail(signInRefused(reason)),
      ProviderUnreachable: ({ reason }) => providerAway(reason)
    })
  )
  if (identity.email === undefined) return yield* signInRefused("the id token carries no e-mail")
  if (!verifiedBy(identity.claims[connection.emailVerifiedClaim])) {
    return yield* signInRefused(`the provider has not verified the e-mail ${identity.email} (claim ${connection.emailVerifiedClaim})`)
  }
  const domain = domainOf(identity.email)
  if (!connection.domains.includes(domain)) return yield* signInRefused(`the e-mail's domain ${domain} is not one the connection allows`)

  const account = yield* (yield* IdentityProvider).ensureAccount(identity.email).pipe(Effect.catchTag("IdentityProviderUnavailable", identityOutage))
  const member = yield* joinBySingleSignOn(tenant.id, account, roleFromClaims(connection, identity.claims), now)
  if (Option.isNone(member)) {
    return yield* new MemberWasRemoved({ detail: `This person was removed from '${slug}'; only a new invitation, once accepted, brings them back.` })
  }
  return yield* getAccount(account.subject)
})

/**
 * The membership single sign-on gives an account in a tenant: the active one it has, else a new
 * member (source SSO_JIT) with `role`. None for a person removed from the tenant: removal is
 * irreversible, only a new invitation, once accepted, brings them back.
 */
export const joinBySingleSignOn = Effect.fn("joinBySingleSignOn")(function*(tenantId: string, account: Account, role: ArbRole, now: DateTime.Utc) {
  const members = yield* MemberRepository
  const existing = yield* members.findActiveBySub(tenantId, account.subject)
  if (Option.isSome(existing)) return existing
  if (yield* members.hasRemovedMembership(tenantId, account.subject)) return Option.none<Member>()
  const member = new Member({ userSub: account.subject, userEmail: account.email, arbRole: role, source: "SSO_JIT", grantedAt: now })
  return yield* members.insert({ tenantId, member }).pipe(
    Effect.as(Option.some(member)),
    Effect.catchTag("MemberExists", () =>
      // Two first sign-ins of one person at once: the second finds the member the first made.
      Effect.flatMap(members.findActiveBySub(tenantId, account.subject), (raced) =>
        Option.isSome(raced)
          ? Effect.succeed(raced)
          : Effect.fail(new Conflict({ detail: "Another active member of the tenant already has this e-mail." }))))
  )
})

/**
 * The workspaces whose provider signs in this e-mail's domain, by slug: the console's sign-in by
 * work e-mail. Slugs only, as the workspace form takes them.
 */
export const findSsoTenants = Effect.fn("findSsoTenants")(function*(email: string) {
  const tenantIds = yield* (yield* SsoConnectionRepository).tenantIdsForDomain(domainOf(email.trim()))
  const tenants = yield* TenantRepository
  const slugs = yield* Effect.forEach(tenantIds, (id) => Effect.map(tenants.findById(id), Option.map((tenant) => tenant.slug)))
  return new SsoDomainTenants({ slugs: slugs.flatMap(Option.toArray).sort() })
})

/**
 * An operator vouches for the connection's domains (docs/security.md, "Single sign-on"): a
 * tenant-admin can name any domain, a mail provider's included, so a work e-mail leads to a
 * workspace's provider only once an operator who checked the company owns them confirms them.
 */
export const confirmSsoDomains = Effect.fn("confirmSsoDomains")(function*(slug: string, actor: string, origin?: RequestOrigin) {
  const tenant = yield* requireTenant(slug)
  const settings = yield* ProvisioningSettings
  const connections = yield* SsoConnectionRepository
  const now = yield* DateTime.now
  const record = yield* (yield* UnitOfWork).run(Effect.gen(function*() {
    const confirmed = yield* connections.confirmDomains(tenant.id, now)
    if (Option.isNone(confirmed)) return yield* noConnection(slug)
    const record = confirmed.value
    yield* recordSecurityEvent(origin, {
      tenantId: tenant.id,
      at: record.updatedAt,
      actorSub: actor,
      actorEmail: "",
      action: "sso_domains_confirmed",
      target: null,
      detail: { domains: record.domains.join(",") }
    })
    return record
  }))
  return toConnection(record, settings.consoleUrl, slug)
})
