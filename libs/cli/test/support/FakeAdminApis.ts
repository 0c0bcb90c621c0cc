import { HttpApiBuilder } from "effect/http-api"
import { HttpRouter, HttpServer, HttpServerRequest } from "effect/http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
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
import { ErrorsUrl, ProblemMiddlewareLive } from "@portfolio/platform/http"
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
export const FixedTime = DateTime.makeUnsafe("2026-07-01T10:00:00.000Z")

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

export class FakeAdmin extends Context.Service<FakeAdmin, {
  readonly state: FakeState
  readonly urls: { readonly gateway: string; readonly provisioning: string; readonly referential: string; readonly console: string }
}>()("test/FakeAdmin") {}

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
      .handle("resendWelcome", ({ params, payload }) =>
        Effect.gen(function*() {
          yield* recordCaller(state)
          const { members } = yield* tenantOf(state, params.slug)
          const member = members.find((m) => m.userEmail.toLowerCase() === payload.email.toLowerCase())
          if (member === undefined) return yield* new NotFound({ detail: `${payload.email} is not a member of ${params.slug}.` })
          if (state.passwords.has(payload.email.toLowerCase())) return yield* new Conflict({ detail: "This account already has a password." })
          return new WelcomeLink({ invitationId: welcomeId(99), expiresAt: DateTime.add(FixedTime, { days: 7 }) })
        }))
      .handle("getTenant", ({ params }) => Effect.andThen(recordCaller(state), Effect.map(tenantOf(state, params.slug), (entry) => entry.tenant)))
      .handle("findMember", ({ params }) =>
        Effect.gen(function*() {
          yield* recordCaller(state)
          const { members, tenant } = yield* tenantOf(state, params.slug)
          const member = members.find((m) => m.userEmail.toLowerCase() === params.email.toLowerCase())
          if (member === undefined) return yield* new NotFound({ detail: `${params.email} is not a member of ${params.slug}.` })
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
      .handle("setSsoConnection", ({ params, payload }) =>
        Effect.gen(function*() {
          yield* recordCaller(state)
          yield* recordSsoRequest(state, payload)
          const { tenant } = yield* tenantOf(state, params.slug)
          const connection = new SsoConnection({
            tenantId: tenant.id,
            issuer: payload.issuer,
            clientId: payload.clientId,
            redirectUri: ssoRedirectUri(params.slug),
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
          state.sso.set(params.slug, connection)
          return connection
        }))
      .handle("getSsoConnection", ({ params }) =>
        Effect.gen(function*() {
          yield* recordCaller(state)
          yield* recordSsoRequest(state)
          return yield* connectionOf(state, params.slug)
        }))
      .handle("confirmSsoDomains", ({ params }) =>
        Effect.gen(function*() {
          yield* recordCaller(state)
          yield* recordSsoRequest(state)
          const confirmed = new SsoConnection({ ...(yield* connectionOf(state, params.slug)), domainsConfirmed: true })
          state.sso.set(params.slug, confirmed)
          return confirmed
        }))
      .handle("disableSsoConnection", ({ params }) =>
        Effect.gen(function*() {
          yield* recordCaller(state)
          yield* recordSsoRequest(state)
          yield* connectionOf(state, params.slug)
          state.sso.delete(params.slug)
        }))
      .handle("listTenantInvitations", ({ params }) =>
        Effect.andThen(recordCaller(state), Effect.map(tenantOf(state, params.slug), () => state.invitations.get(params.slug) ?? [])))
      .handle("listOutboundMail", ({ query }) =>
        Effect.andThen(
          recordCaller(state),
          Effect.succeed(state.mail.filter((m) => query.to === undefined || m.to === query.to))
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
        Effect.andThen(
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
      .handle("listPatRequests", ({ query }) =>
        Effect.andThen(
          recordCaller(state),
          Effect.succeed(
            [...state.filedRequests.values()]
              .filter((r) => r.tenantId === query.tenantId && (query.status === undefined || r.status === query.status))
              .reverse()
          )
        ))
      .handle("approvePatRequest", ({ params }) =>
        Effect.map(decide(state, params.id, { status: "approved", patId: PatId }), (request) =>
          new ApprovedPatRequest({
            request,
            pat: new CreatedPat({ id: PatId, token: PatToken, tokenPrefix: PatToken.slice(0, 10), scope: request.scope, expiresAt: DateTime.add(FixedTime, { days: request.days }) })
          })))
      .handle("denyPatRequest", ({ params, payload }) => decide(state, params.id, { status: "denied", reason: payload.reason }))
      .handle("createPartnerClient", ({ params, payload }) =>
        Effect.gen(function*() {
          yield* recordCaller(state)
          const clientId = `service-partner-${payload.name}`
          if (state.partners.has(clientId)) return yield* new Conflict({ detail: `This tenant has a partner client named '${payload.name}' already; choose another name.` })
          const client = new PartnerClient({
            clientId,
            tenantId: params.tenantId,
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
      .handle("listPartnerClients", ({ params }) =>
        Effect.andThen(recordCaller(state), Effect.succeed([...state.partners.values()].filter((c) => c.tenantId === params.tenantId))))
      .handle("rotatePartnerSecret", ({ params, payload }) =>
        Effect.gen(function*() {
          yield* recordCaller(state)
          const found = state.partners.get(params.clientId)
          if (found === undefined) return yield* new NotFound({ detail: `No partner client has the id '${params.clientId}'.` })
          const client = new PartnerClient({
            ...found,
            previousSecretExpiresAt: payload.graceSeconds === 0 ? null : DateTime.add(FixedTime, { seconds: payload.graceSeconds })
          })
          state.partners.set(client.clientId, client)
          return new PartnerClientWithSecret({ ...client, clientSecret: partnerSecret(state.partners.size + 1) })
        }))
      .handle("disablePartnerClient", ({ params }) => switchPartner(state, params.clientId, "disabled"))
      .handle("enablePartnerClient", ({ params }) => switchPartner(state, params.clientId, "enabled"))
      .handle("createScimToken", ({ params, payload }) => makeScimToken(state, params.tenantId, payload.label))
      .handle("listScimTokens", ({ params }) =>
        Effect.andThen(recordCaller(state), Effect.sync(() => scimTokensOf(state, params.tenantId))))
      .handle("revokeScimToken", ({ params }) => revokeScimToken(state, params.tenantId, params.id))
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
      .handle("putApplication", ({ params, payload }) =>
        Effect.gen(function*() {
          yield* recordCaller(state)
          yield* tenantById(state, params.tenantId)
          const unknown = (payload.regulations ?? "").split(",").filter((t) => t !== "" && !(RegulationTokens as ReadonlyArray<string>).includes(t))
          if (unknown.length > 0) return yield* new InvalidRegulation({ detail: `Unknown regulation token ${unknown.join(", ")}.` })
          const application = applicationFrom(params.code, payload)
          state.applications.set(`${params.tenantId}/${params.code}`, application)
          return application
        }))
      .handle("seedDemo", ({ params, payload }) =>
        Effect.gen(function*() {
          yield* recordCaller(state)
          // The contract declares no 404 here: the CLI resolves the tenant before seeding.
          yield* Effect.orDie(tenantById(state, params.tenantId))
          return new DemoSeedResult({ applications: payload.applications, functions: payload.functions, links: payload.functions * 2 })
        }))
      .handle("createDas", ({ params, payload }) =>
        Effect.gen(function*() {
          yield* recordCaller(state)
          if (!state.applications.has(`${params.tenantId}/${payload.applicationCode}`)) {
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
          state.das.set(das.id, { tenantId: params.tenantId, das })
          return das
        }))
      .handle("submitDas", ({ params }) =>
        Effect.gen(function*() {
          yield* recordCaller(state)
          const entry = state.das.get(params.id)
          if (entry === undefined || entry.tenantId !== params.tenantId) return yield* new NotFound({ detail: `DAS '${params.id}' does not exist.` })
          if (entry.das.status === "SUBMITTED") return yield* new Conflict({ detail: `DAS '${params.id}' is already submitted.` })
          const caller = yield* Caller
          const das = new Das({ ...entry.das, status: "SUBMITTED", submittedBy: caller.subject, submittedAt: FixedTime })
          state.das.set(das.id, { tenantId: params.tenantId, das })
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
      .handle("listSecurityEvents", ({ query }) =>
        Effect.as(recordCaller(state), state.securityEvents.filter((e) => e.tenantId === query.tenantId)))
      .handle("listUnattributedSecurityEvents", () => Effect.as(recordCaller(state), state.securityEvents.filter((e) => e.tenantId === null)))
  )

const fakeServer = NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })

/** The contracts' problems middlewares, as the services have them; the fakes' errors URL matters to no test. */
const problems = ProblemMiddlewareLive.pipe(Layer.provide(Layer.succeed(ErrorsUrl, "https://errors.fake/api")))

/**
 * Serves one API (`HttpApiBuilder.layer` and its groups) on a free port of 127.0.0.1 for the
 * enclosing scope, logging nothing; answers its base URL.
 */
export const serve = <E>(api: Layer.Layer<never, E, Layer.Success<typeof fakeServer> | Layer.Success<typeof problems> | HttpRouter.HttpRouter>) =>
  Effect.gen(function*() {
    const server = yield* Layer.build(fakeServer)
    const app = api.pipe(Layer.provide(problems))
    yield* Layer.build(HttpRouter.serve(app, { disableLogger: true, disableListenLog: true }).pipe(Layer.provide(Layer.succeedContext(server))))
    const address = Context.get(server, HttpServer.HttpServer).address
    if (address._tag !== "InetAddressV4") return yield* Effect.die("expected an IPv4 address")
    return `http://127.0.0.1:${address.port}`
  })

export const FakeAdminLive = Layer.effect(
  FakeAdmin,
  Effect.gen(function*() {
    const state: FakeState = { tenants: new Map(), patRequests: [], filedRequests: new Map(), callers: [], applications: new Map(), das: new Map(), mail: [...KeptMail], invitations: new Map(), passwords: new Set(), partners: new Map(), scimTokens: [], securityEvents: [], sso: new Map(), ssoRequests: [] }
    const auth = OperatorAuthenticationLive.pipe(Layer.provide(InternalSecret.fixed(FakeSecret)))
    const gateway = yield* serve(HttpApiBuilder.layer(GatewayAdminApi).pipe(Layer.provide(gatewayGroup(state).pipe(Layer.provide(auth)))))
    const provisioning = yield* serve(HttpApiBuilder.layer(ProvisioningAdminApi).pipe(Layer.provide(provisioningGroup(state).pipe(Layer.provide(auth)))))
    const referential = yield* serve(HttpApiBuilder.layer(ReferentialAdminApi).pipe(Layer.provide(referentialGroup(state).pipe(Layer.provide(auth)))))
    const console = yield* serve(HttpApiBuilder.layer(ConsoleAdminApi).pipe(Layer.provide(consoleGroup(state).pipe(Layer.provide(auth)))))
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
