import { InvalidRequest, NotFound, SsoConnection, type SsoConnectionRequest } from "@portfolio/domain"
import { type RequestOrigin } from "@portfolio/platform/http"
import { UnitOfWork } from "@portfolio/platform/sql"
import { DateTime, Effect, Option } from "effect"
import { ProvisioningSettings } from "../Config.js"
import { issuerProblem, redirectUriOf } from "../domain/SsoIssuer.js"
import { IssuerDiscovery } from "../ports/IssuerDiscovery.js"
import { MemberRepository } from "../ports/MemberRepository.js"
import { type SsoConnectionRecord, SsoConnectionRepository } from "../ports/SsoConnectionRepository.js"
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
  origin?: RequestOrigin
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
  const record: SsoConnectionRecord = {
    tenantId: tenant.id,
    issuer: request.issuer,
    clientId: request.clientId,
    domains: [...new Set(request.domains)],
    defaultRole: request.defaultRole,
    roleClaim: request.roleClaim,
    roleMap: request.roleMap.map(({ role, value }) => ({ value, role })),
    required: request.required,
    breakGlass: [...new Set(request.breakGlass.map((email) => email.toLowerCase()))],
    secretSetAt: now,
    updatedAt: now
  }
  const connections = yield* SsoConnectionRepository
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
