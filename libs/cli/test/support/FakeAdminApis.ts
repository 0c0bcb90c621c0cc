import { type HttpApi, HttpApiBuilder, HttpServer, HttpServerRequest } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import {
  Application,
  type ApplicationInput,
  ApprovedPatRequest,
  Caller,
  Conflict,
  ConsoleAdminApi,
  CreatedPat,
  Das,
  type CreatePatRequest,
  DemoSeedResult,
  GatewayAdminApi,
  InvalidRegulation,
  type Invitation,
  Member,
  NotFound,
  OutboundMail,
  PatRequest,
  PatRequestLifetimeDays,
  PatRequestDecider,
  PartnerClient,
  PartnerClientWithSecret,
  ProvisioningAdminApi,
  ReferentialAdminApi,
  RegulationTokens,
  RevokedPat,
  ScimToken,
  ScimTokensPerTenantMax,
  ScimTokenWithSecret,
  type SecurityEvent,
  SsoConnection,
  type SsoConnectionRequest,
  Tenant,
  TenantMember,
  TenantWithAdmin,
  WelcomeLink
} from "@portfolio/domain"
import { InternalSecret, OperatorAuthenticationLive } from "@portfolio/platform/security"
import { Context, DateTime, Effect, Layer } from "effect"
import { createServer } from "node:http"

/**
 * In-memory stand-ins for the admin APIs of the gateway, provisioning, the referential and the
 * console, served over real HTTP on free ports and guarded by the platform's real operator
 * authentication, so the CLI's typed clients and signing are exercised end to end. Identifiers and
 * times are fixed so that outputs can be asserted exactly.
 */
export const FakeSecret = "fake-internal-secret-of-at-least-32-characters"
export const FixedTime = DateTime.unsafeMake("2026-07-01T10:00:00.000Z")

/** The id of the n-th tenant created (from 1). */
export const tenantId = (n: number) => `10000000-0000-4000-8000-${String(n).padStart(12, "0")}`
export const PatId = "33333333-3333-4333-8333-333333333333"
/** The id of the welcome invitation of the n-th tenant created (from 1). */
export const welcomeId = (n: number) => `55555555-0000-4000-8000-${String(n).padStart(12, "0")}`
/** The id of the n-th DAS created (from 1). */
export const dasId = (n: number) => `44444444-0000-4000-8000-${String(n).padStart(12, "0")}`
export const PatToken = "ap_pat_abcdefghijklmnopqrstuvwxyz0123ABCDEF"
/** The id of the n-th PAT request filed (from 1). */
export const patRequestId = (n: number) => `66666666-0000-4000-8000-${String(n).padStart(12, "0")}`
/** The secret the fake gives a partner client, n-th created or rotated from 1. */
export const partnerSecret = (n: number) => `ap_cs_${String(n).padStart(46, "0")}`

/** The id of the n-th SCIM token made (from 1). */
export const scimTokenId = (n: number) => `77777777-0000-4000-8000-${String(n).padStart(12, "0")}`
/** The n-th SCIM token made (from 1): `ap_scim_`, 30 + 6 characters, of which `abc` begin the random ones. */
export const scimTokenSecret = (n: number) => `ap_scim_abc${String(n).padStart(33, "0")}`

/** The redirect URI the fake's provisioning gives the connection of tenant `slug`. */
export const ssoRedirectUri = (slug: string) => `https://console.portfolio.test/sso/${slug}/callback`

/** The mail provisioning kept, newest first. */
export const KeptMail = [
  new OutboundMail({ id: 2, to: "ana@acme.example", subject: "You are invited to acme", text: "Accept:\nhttp://localhost:8084/accept/t2", createdAt: FixedTime }),
  new OutboundMail({ id: 1, to: "bob@acme.example", subject: "You are invited to acme", text: "Accept: http://localhost:8084/accept/t1", createdAt: FixedTime })
]

export interface FakeState {
  readonly tenants: Map<string, { readonly tenant: Tenant; readonly members: Array<Member> }>
  readonly patRequests: Array<CreatePatRequest>
  /** The PAT requests filed, by id, as the gateway keeps them. */
  readonly filedRequests: Map<string, PatRequest>
  readonly callers: Array<string>
  readonly applications: Map<string, Application>
  /** DAS records by id, each with its tenant id. */
  readonly das: Map<string, { readonly tenantId: string; readonly das: Das }>
  readonly mail: Array<OutboundMail>
  /** Invitations by tenant slug, newest first, as provisioning would answer them. */
  readonly invitations: Map<string, ReadonlyArray<Invitation>>
  /** The e-mails (lower case) whose account has a password: a tenant made for one of them mails no welcome link. */
  readonly passwords: Set<string>
  /** Partner clients by client id. */
  readonly partners: Map<string, PartnerClient>
  /** SCIM tokens in the order they were made. */
  readonly scimTokens: Array<ScimToken>
  /** The console's security log, newest first; a null tenantId for the entries of no tenant. */
  readonly securityEvents: Array<SecurityEvent>
  /** Single sign-on connections by tenant slug, as provisioning answers them (no secret). */
  readonly sso: Map<string, SsoConnection>
  /** Every request to the sso endpoints as provisioning received it, the payload decoded (its secret included). */
  readonly ssoRequests: Array<{ readonly method: string; readonly url: string; readonly payload?: SsoConnectionRequest }>
}

export class FakeAdmin extends Context.Tag("test/FakeAdmin")<FakeAdmin, {
  readonly state: FakeState
  readonly urls: { readonly gateway: string; readonly provisioning: string; readonly referential: string; readonly console: string }
}>() {}

/** Endpoints of the contracts that the CLI never calls. */
const unused = () => Effect.die("not used by the CLI")

const recordCaller = (state: FakeState) => Effect.flatMap(Caller, (caller) => Effect.sync(() => state.callers.push(`${caller.subject}/${caller.role}/${caller.scope}`)))

const tenantOf = (state: FakeState, slug: string) => {
  const entry = state.tenants.get(slug)
  return entry === undefined ? Effect.fail(new NotFound({ detail: `No tenant '${slug}'.` })) : Effect.succeed(entry)
}

const tenantById = (state: FakeState, id: string) => {
  const entry = [...state.tenants.values()].find(({ tenant }) => tenant.id === id)
  return entry === undefined ? Effect.fail(new NotFound({ detail: `No tenant ${id}.` })) : Effect.succeed(entry)
}

const recordSsoRequest = (state: FakeState, payload?: SsoConnectionRequest) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    Effect.sync(() => state.ssoRequests.push({ method: request.method, url: request.url, ...(payload === undefined ? {} : { payload }) })))

const connectionOf = (state: FakeState, slug: string) =>
  Effect.flatMap(tenantOf(state, slug), () => {
    const connection = state.sso.get(slug)
    return connection === undefined ? Effect.fail(new NotFound({ detail: `Tenant '${slug}' has no single sign-on connection.` })) : Effect.succeed(connection)
  })

const provisioningGroup = (state: FakeState) =>
  HttpApiBuilder.group(ProvisioningAdminApi, "provisioningAdmin", (handlers) =>
    handlers
      .handle("createTenant", ({ payload }) =>
        Effect.gen(function*() {
          yield* recordCaller(state)
          if (state.tenants.has(payload.slug)) return yield* new Conflict({ detail: `Tenant '${payload.slug}' exists.` })
          const tenant = new Tenant({ id: tenantId(state.tenants.size + 1), slug: payload.slug, createdAt: FixedTime })
          const admin = new Member({ userSub: `sub-admin-${payload.slug}`, userEmail: payload.adminEmail, arbRole: "tenant-admin", source: "SIGNUP", grantedAt: FixedTime })
          state.tenants.set(payload.slug, { tenant, members: [admin] })
          const welcome = state.passwords.has(payload.adminEmail.toLowerCase())
            ? null
            : new WelcomeLink({ invitationId: welcomeId(state.tenants.size), expiresAt: DateTime.add(FixedTime, { days: 7 }) })
          return new TenantWithAdmin({ tenant, admin, welcome })
        }))
      .handle("resendWelcome", ({ path, payload }) =>
        Effect.gen(function*() {
          yield* recordCaller(state)
          const { members } = yield* tenantOf(state, path.slug)
          const member = members.find((m) => m.userEmail.toLowerCase() === payload.email.toLowerCase())
          if (member === undefined) return yield* new NotFound({ detail: `${payload.email} is not a member of ${path.slug}.` })
          if (state.passwords.has(payload.email.toLowerCase())) return yield* new Conflict({ detail: "This account already has a password." })
          return new WelcomeLink({ invitationId: welcomeId(99), expiresAt: DateTime.add(FixedTime, { days: 7 }) })
        }))
      .handle("getTenant", ({ path }) => Effect.zipRight(recordCaller(state), Effect.map(tenantOf(state, path.slug), (entry) => entry.tenant)))
      .handle("findMember", ({ path }) =>
        Effect.gen(function*() {
          yield* recordCaller(state)
          const { members, tenant } = yield* tenantOf(state, path.slug)
          const member = members.find((m) => m.userEmail.toLowerCase() === path.email.toLowerCase())
          if (member === undefined) return yield* new NotFound({ detail: `${path.email} is not a member of ${path.slug}.` })
          return new TenantMember({ tenant, member })
        }))
      // The gateway's, never the CLI's.
      .handle("findMembership", unused)
      .handle("provisionSsoMember", unused)
      .handle("startSsoSignIn", unused)
      .handle("findSsoTenants", unused)
      .handle("completeSsoSignIn", unused)
      .handle("checkSignIn", unused)
      .handle("getAccount", unused)
      .handle("findFailedSignInTenants", unused)
      // The console's: no command acts as a member.
      .handle("listMembersAs", unused)
      .handle("listInvitationsAs", unused)
      .handle("inviteAs", unused)
      .handle("revokeInvitationAs", unused)
      .handle("removeMemberAs", unused)
      .handle("getSsoConnectionAs", unused)
      .handle("setSsoConnectionAs", unused)
      .handle("disableSsoConnectionAs", unused)
      .handle("listProvisioningSecurityEvents", unused)
      .handle("setSsoConnection", ({ path, payload }) =>
        Effect.gen(function*() {
          yield* recordCaller(state)
          yield* recordSsoRequest(state, payload)
          const { tenant } = yield* tenantOf(state, path.slug)
          const connection = new SsoConnection({
            tenantId: tenant.id,
            issuer: payload.issuer,
            clientId: payload.clientId,
            redirectUri: ssoRedirectUri(path.slug),
            domains: payload.domains,
            defaultRole: payload.defaultRole,
            roleClaim: payload.roleClaim,
            roleMap: payload.roleMap,
            required: payload.required,
            breakGlass: payload.breakGlass,
            domainsConfirmed: true,
            emailVerifiedClaim: payload.emailVerifiedClaim,
            secretSetAt: FixedTime,
            updatedAt: FixedTime
          })
          state.sso.set(path.slug, connection)
          return connection
        }))
      .handle("getSsoConnection", ({ path }) =>
        Effect.gen(function*() {
          yield* recordCaller(state)
          yield* recordSsoRequest(state)
          return yield* connectionOf(state, path.slug)
        }))
      .handle("confirmSsoDomains", ({ path }) =>
        Effect.gen(function*() {
          yield* recordCaller(state)
          yield* recordSsoRequest(state)
          const confirmed = new SsoConnection({ ...(yield* connectionOf(state, path.slug)), domainsConfirmed: true })
          state.sso.set(path.slug, confirmed)
          return confirmed
        }))
      .handle("disableSsoConnection", ({ path }) =>
        Effect.gen(function*() {
          yield* recordCaller(state)
          yield* recordSsoRequest(state)
          yield* connectionOf(state, path.slug)
          state.sso.delete(path.slug)
        }))
      .handle("listTenantInvitations", ({ path }) =>
        Effect.zipRight(recordCaller(state), Effect.map(tenantOf(state, path.slug), () => state.invitations.get(path.slug) ?? [])))
      .handle("listOutboundMail", ({ urlParams }) =>
        Effect.zipRight(
          recordCaller(state),
          Effect.succeed(state.mail.filter((m) => urlParams.to === undefined || m.to === urlParams.to))
        ))
  )

const gatewayGroup = (state: FakeState) =>
  HttpApiBuilder.group(GatewayAdminApi, "gatewayAdmin", (handlers) =>
    handlers
      .handle("createPat", ({ payload }) =>
        Effect.gen(function*() {
          yield* recordCaller(state)
          state.patRequests.push(payload)
          return new CreatedPat({
            id: PatId,
            token: PatToken,
            tokenPrefix: PatToken.slice(0, 10),
            scope: payload.scope,
            expiresAt: DateTime.add(FixedTime, { days: payload.days })
          })
        }))
      .handle("revokePat", ({ payload }) =>
        Effect.zipRight(
          recordCaller(state),
          payload.tokenOrId === PatId || payload.tokenOrId === PatToken
            ? Effect.succeed(new RevokedPat({ id: PatId, revokedAt: FixedTime }))
            : Effect.fail(new NotFound({ detail: "No such token." }))
        ))
      .handle("listPats", unused)
      .handle("filePatRequest", ({ payload }) =>
        Effect.gen(function*() {
          yield* recordCaller(state)
          const request = new PatRequest({
            ...payload,
            id: patRequestId(state.filedRequests.size + 1),
            status: "pending",
            createdAt: FixedTime,
            expiresAt: DateTime.add(FixedTime, { days: PatRequestLifetimeDays }),
            decidedAt: null,
            decidedBy: null,
            reason: null,
            patId: null
          })
          state.filedRequests.set(request.id, request)
          return request
        }))
      .handle("listPatRequests", ({ urlParams }) =>
        Effect.zipRight(
          recordCaller(state),
          Effect.succeed(
            [...state.filedRequests.values()]
              .filter((r) => r.tenantId === urlParams.tenantId && (urlParams.status === undefined || r.status === urlParams.status))
              .reverse()
          )
        ))
      .handle("approvePatRequest", ({ path }) =>
        Effect.map(decide(state, path.id, { status: "approved", patId: PatId }), (request) =>
          new ApprovedPatRequest({
            request,
            pat: new CreatedPat({ id: PatId, token: PatToken, tokenPrefix: PatToken.slice(0, 10), scope: request.scope, expiresAt: DateTime.add(FixedTime, { days: request.days }) })
          })))
      .handle("denyPatRequest", ({ path, payload }) => decide(state, path.id, { status: "denied", reason: payload.reason }))
      .handle("createPartnerClient", ({ path, payload }) =>
        Effect.gen(function*() {
          yield* recordCaller(state)
          const clientId = `service-partner-${payload.name}`
          if (state.partners.has(clientId)) return yield* new Conflict({ detail: `This tenant has a partner client named '${payload.name}' already; choose another name.` })
          const client = new PartnerClient({
            clientId,
            tenantId: path.tenantId,
            name: payload.name,
            scope: payload.scope,
            state: "enabled",
            previousSecretExpiresAt: null,
            createdAt: FixedTime,
            updatedAt: FixedTime
          })
          state.partners.set(clientId, client)
          return new PartnerClientWithSecret({ ...client, clientSecret: partnerSecret(state.partners.size) })
        }))
      .handle("listPartnerClients", ({ path }) =>
        Effect.zipRight(recordCaller(state), Effect.succeed([...state.partners.values()].filter((c) => c.tenantId === path.tenantId))))
      .handle("rotatePartnerSecret", ({ path, payload }) =>
        Effect.gen(function*() {
          yield* recordCaller(state)
          const found = state.partners.get(path.clientId)
          if (found === undefined) return yield* new NotFound({ detail: `No partner client has the id '${path.clientId}'.` })
          const client = new PartnerClient({
            ...found,
            previousSecretExpiresAt: payload.graceSeconds === 0 ? null : DateTime.add(FixedTime, { seconds: payload.graceSeconds })
          })
          state.partners.set(client.clientId, client)
          return new PartnerClientWithSecret({ ...client, clientSecret: partnerSecret(state.partners.size + 1) })
        }))
      .handle("disablePartnerClient", ({ path }) => switchPartner(state, path.clientId, "disabled"))
      .handle("enablePartnerClient", ({ path }) => switchPartner(state, path.clientId, "enabled"))
      .handle("createScimToken", ({ path, payload }) => makeScimToken(state, path.tenantId, payload.label))
      .handle("listScimTokens", ({ path }) =>
        Effect.zipRight(recordCaller(state), Effect.sync(() => scimTokensOf(state, path.tenantId))))
      .handle("revokeScimToken", ({ path }) => revokeScimToken(state, path.tenantId, path.id))
      // The console's: no command reads it.
      .handle("listGatewaySecurityEvents", unused)
  )

/** Settles a pending request as the gateway would, the operator who signed the call as its decider. */
const decide = (state: FakeState, id: string, decision: { readonly status: "approved"; readonly patId: string } | { readonly status: "denied"; readonly reason: string }) =>
  Effect.gen(function*() {
    yield* recordCaller(state)
    const caller = yield* Caller
    const found = state.filedRequests.get(id)
    if (found === undefined) return yield* new NotFound({ detail: `No PAT request has the id ${id}.` })
    if (found.status !== "pending") return yield* new Conflict({ detail: `PAT request ${id} is ${found.status}: only a pending request can be approved or denied.` })
    const settled = new PatRequest({
      ...found,
      status: decision.status,
      decidedAt: FixedTime,
      decidedBy: new PatRequestDecider({ userSub: caller.subject, email: null, role: "operator" }),
      reason: decision.status === "denied" ? decision.reason : null,
      patId: decision.status === "approved" ? decision.patId : null
    })
    state.filedRequests.set(id, settled)
    return settled
  })

const switchPartner = (state: FakeState, clientId: string, to: PartnerClient["state"]) =>
  Effect.gen(function*() {
    yield* recordCaller(state)
    const found = state.partners.get(clientId)
    if (found === undefined) return yield* new NotFound({ detail: `No partner client has the id '${clientId}'.` })
    const client = new PartnerClient({ ...found, state: to })
    state.partners.set(clientId, client)
    return client
  })

/** The gateway's order: the active ones first, then the revoked ones, newest first in each. */
const scimTokensOf = (state: FakeState, tenantId: string) => {
  const ofTenant = state.scimTokens.filter((t) => t.tenantId === tenantId).reverse()
  return [...ofTenant.filter((t) => t.revokedAt === null), ...ofTenant.filter((t) => t.revokedAt !== null)]
}

const makeScimToken = (state: FakeState, tenantId: string, label: string) =>
  Effect.gen(function*() {
    yield* recordCaller(state)
    const caller = yield* Caller
    if (scimTokensOf(state, tenantId).filter((t) => t.revokedAt === null).length >= ScimTokensPerTenantMax) {
      return yield* new Conflict({
        detail: `This tenant has ${ScimTokensPerTenantMax} active SCIM tokens already, the most it may hold: revoke the one its identity tool no longer uses first.`
      })
    }
    const n = state.scimTokens.length + 1
    const token = scimTokenSecret(n)
    const made = new ScimToken({
      id: scimTokenId(n),
      tenantId,
      label,
      tokenPrefix: token.slice(0, 11),
      createdBy: caller.subject,
      createdAt: FixedTime,
      lastUsedAt: null,
      revokedAt: null
    })
    state.scimTokens.push(made)
    return new ScimTokenWithSecret({ ...made, token })
  })

/** Another tenant's token is unknown here, as the gateway answers it; revoking again changes nothing. */
const revokeScimToken = (state: FakeState, tenantId: string, id: string) =>
  Effect.gen(function*() {
    yield* recordCaller(state)
    const index = state.scimTokens.findIndex((t) => t.id === id && t.tenantId === tenantId)
    if (index === -1) return yield* new NotFound({ detail: `This tenant has no SCIM token with the id ${id}.` })
    const found = state.scimTokens[index]!
    const revoked = found.revokedAt === null ? new ScimToken({ ...found, revokedAt: DateTime.add(FixedTime, { hours: 1 }) }) : found
    state.scimTokens[index] = revoked
    return revoked
  })

const applicationFrom = (code: string, input: ApplicationInput) =>
  new Application({
    code,
    name: input.name,
    description: input.description ?? null,
    parentCode: input.parentCode ?? null,
    status: input.status ?? "ACTIVE",
    dataClassification: input.dataClassification ?? "INTERNAL",
    criticality: input.criticality ?? "NOMINAL",
    rtoHours: input.rtoHours ?? null,
    rpoHours: input.rpoHours ?? null,
    regulations: input.regulations ?? "",
    roleAssignments: input.roleAssignments ?? "",
    licenseCost: input.licenseCost ?? null,
    supportCost: input.supportCost ?? null,
    infraCost: input.infraCost ?? null,
    staffCost: input.staffCost ?? null,
    annualCost: input.licenseCost ?? null,
    applicationVip: input.criticality === "MISSION_CRITICAL",
    contactIT: null,
    contactMetier: null,
    createdAt: FixedTime,
    updatedAt: FixedTime
  })

const referentialGroup = (state: FakeState) =>
  HttpApiBuilder.group(ReferentialAdminApi, "referentialAdmin", (handlers) =>
    handlers
      .handle("putApplication", ({ path, payload }) =>
        Effect.gen(function*() {
          yield* recordCaller(state)
          yield* tenantById(state, path.tenantId)
          const unknown = (payload.regulations ?? "").split(",").filter((t) => t !== "" && !(RegulationTokens as ReadonlyArray<string>).includes(t))
          if (unknown.length > 0) return yield* new InvalidRegulation({ detail: `Unknown regulation token ${unknown.join(", ")}.` })
          const application = applicationFrom(path.code, payload)
          state.applications.set(`${path.tenantId}/${path.code}`, application)
          return application
        }))
      .handle("seedDemo", ({ path, payload }) =>
        Effect.gen(function*() {
          yield* recordCaller(state)
          // The contract declares no 404 here: the CLI resolves the tenant before seeding.
          yield* Effect.orDie(tenantById(state, path.tenantId))
          return new DemoSeedResult({ applications: payload.applications, functions: payload.functions, links: payload.functions * 2 })
        }))
      .handle("createDas", ({ path, payload }) =>
        Effect.gen(function*() {
          yield* recordCaller(state)
          if (!state.applications.has(`${path.tenantId}/${payload.applicationCode}`)) {
            return yield* new NotFound({ detail: `Application '${payload.applicationCode}' does not exist.` })
          }
          const das = new Das({
            id: dasId(state.das.size + 1),
            applicationCode: payload.applicationCode,
            title: payload.title,
            content: payload.content ?? null,
            status: "DRAFT",
            createdAt: FixedTime,
            submittedBy: null,
            submittedAt: null
          })
          state.das.set(das.id, { tenantId: path.tenantId, das })
          return das
        }))
      .handle("submitDas", ({ path }) =>
        Effect.gen(function*() {
          yield* recordCaller(state)
          const entry = state.das.get(path.id)
          if (entry === undefined || entry.tenantId !== path.tenantId) return yield* new NotFound({ detail: `DAS '${path.id}' does not exist.` })
          if (entry.das.status === "SUBMITTED") return yield* new Conflict({ detail: `DAS '${path.id}' is already submitted.` })
          const caller = yield* Caller
          const das = new Das({ ...entry.das, status: "SUBMITTED", submittedBy: caller.subject, submittedAt: FixedTime })
          state.das.set(das.id, { tenantId: path.tenantId, das })
          return das
        }))
      .handle("createFunction", unused)
      .handle("updateFunction", unused)
      .handle("moveFunction", unused)
      .handle("deleteFunction", unused)
      .handle("linkApplication", unused)
      .handle("unlinkApplication", unused)
  )

const consoleGroup = (state: FakeState) =>
  HttpApiBuilder.group(ConsoleAdminApi, "consoleAdmin", (handlers) =>
    handlers
      .handle("listSecurityEvents", ({ urlParams }) =>
        Effect.as(recordCaller(state), state.securityEvents.filter((e) => e.tenantId === urlParams.tenantId)))
      .handle("listUnattributedSecurityEvents", () => Effect.as(recordCaller(state), state.securityEvents.filter((e) => e.tenantId === null)))
  )

/** Serves one API on a free port of 127.0.0.1 for the enclosing scope; answers its base URL. */
export const serve = <E>(api: Layer.Layer<HttpApi.Api, E>) =>
  Effect.gen(function*() {
    const server = yield* Layer.build(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
    yield* Layer.build(HttpApiBuilder.serve().pipe(Layer.provide(api), Layer.provide(Layer.succeedContext(server))))
    const address = Context.get(server, HttpServer.HttpServer).address
    if (address._tag !== "TcpAddress") return yield* Effect.die("expected a TCP address")
    return `http://127.0.0.1:${address.port}`
  })

export const FakeAdminLive = Layer.scoped(
  FakeAdmin,
  Effect.gen(function*() {
    const state: FakeState = { tenants: new Map(), patRequests: [], filedRequests: new Map(), callers: [], applications: new Map(), das: new Map(), mail: [...KeptMail], invitations: new Map(), passwords: new Set(), partners: new Map(), scimTokens: [], securityEvents: [], sso: new Map(), ssoRequests: [] }
    const auth = OperatorAuthenticationLive.pipe(Layer.provide(InternalSecret.fixed(FakeSecret)))
    const gateway = yield* serve(HttpApiBuilder.api(GatewayAdminApi).pipe(Layer.provide(gatewayGroup(state).pipe(Layer.provide(auth)))))
    const provisioning = yield* serve(HttpApiBuilder.api(ProvisioningAdminApi).pipe(Layer.provide(provisioningGroup(state).pipe(Layer.provide(auth)))))
    const referential = yield* serve(HttpApiBuilder.api(ReferentialAdminApi).pipe(Layer.provide(referentialGroup(state).pipe(Layer.provide(auth)))))
    const console = yield* serve(HttpApiBuilder.api(ConsoleAdminApi).pipe(Layer.provide(consoleGroup(state).pipe(Layer.provide(auth)))))
    return { state, urls: { gateway, provisioning, referential, console } }
  })
)

/** The id the fake gave the tenant `slug` (ids follow the order of creation, which tests do not fix). */
export const tenantIdOf = (slug: string) =>
  Effect.map(FakeAdmin, ({ state }) => {
    const entry = state.tenants.get(slug)
    if (entry === undefined) throw new Error(`no tenant ${slug} in the fake`)
    return entry.tenant.id
  })
