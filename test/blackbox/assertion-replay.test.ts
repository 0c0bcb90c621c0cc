/**
 * The pen-test finding on internal assertions, against the real processes: assertions captured
 * from genuine traffic of every public and admin operation (through a second gateway and the
 * operator CLI, both pointed at capturing proxies) are replayed straight to the services' ports
 * with every trick of the finding. None may be accepted, and nothing may change.
 */
import { FetchHttpClient } from "effect/http"
import { AdminClients } from "@portfolio/cli/AdminClients"
import { OperatorSettings } from "@portfolio/cli/OperatorSettings"
import {
  ActorRequest,
  ApplicationInput,
  CreatePatRequest,
  FailedSignInLookup,
  FunctionInput,
  ConsoleAdminApi,
  GatewayAdminApi,
  InviteAsRequest,
  MoveFunctionRequest,
  ProvisioningAdminApi,
  PublicApi,
  ReferentialAdminApi,
  SetSsoConnectionAsRequest,
  SignInCheckRequest,
  SsoConnectionRequest,
  SsoDomainLookup,
  SsoMemberRequest,
  SsoSignInCompletion
} from "@portfolio/domain"
import { routeTable } from "@portfolio/platform/http"
import { Effect, Layer, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Captured, type CapturingProxy, replaysOf, sendRaw, sendReplay, startCapturingProxy, startSecondGateway } from "../support/assertionReplay.js"
import { cliJson } from "../support/cli.js"
import { client } from "../support/http.js"
import { startOpenIdProvider } from "../support/OpenIdProvider.js"
import { useSharedSystem } from "../support/useSystem.js"

const system = useSharedSystem()
const slug = "bb-replay"
const adminEmail = `admin@${slug}.example`

type Port = "referential" | "provisioning" | "referentialAdmin" | "provisioningAdmin" | "gatewayAdmin" | "consoleAdmin"
let proxies: Record<Port, CapturingProxy & { readonly upstream: string }>
let gateway2: Awaited<ReturnType<typeof startSecondGateway>>
let tenantId: string
let writeToken: string
/** The newest mail's id when this file began: the outbox is the shared system's, what is older is other files'. */
let mailBefore = 0

beforeAll(async () => {
  mailBefore = Math.max(0, ...(await system.adminOk("provisioning", "GET", "/admin/mail")).map((mail: { id: number }) => mail.id))
  const { serviceUrls, adminUrls } = system.system
  const upstreams: Record<Port, string> = {
    referential: serviceUrls.referential,
    provisioning: serviceUrls.provisioning,
    referentialAdmin: adminUrls.referential,
    provisioningAdmin: adminUrls.provisioning,
    gatewayAdmin: adminUrls.gateway,
    consoleAdmin: adminUrls.console
  }
  const entries = await Promise.all(
    Object.entries(upstreams).map(async ([port, upstream]) => [port, { ...(await startCapturingProxy(port, upstream)), upstream }] as const)
  )
  proxies = Object.fromEntries(entries) as typeof proxies
  gateway2 = await startSecondGateway(
    { ...system.env, LOG_LEVEL: "Warn", RATE_LIMIT_PER_MINUTE: "100000" },
    { referential: proxies.referential.url, provisioning: proxies.provisioning.url }
  )
}, 120_000)

afterAll(async () => {
  await gateway2?.stop()
  await Promise.all(Object.values(proxies ?? {}).map((proxy) => proxy.close()))
})

/** The operator CLI as a process, its admin URLs pointed at the capturing proxies. */
const portfolio = (args: ReadonlyArray<string>, input?: string) =>
  cliJson(args, {
    env: {
      ...system.env,
      GATEWAY_ADMIN_URL: proxies.gatewayAdmin.url,
      PROVISIONING_ADMIN_URL: proxies.provisioningAdmin.url,
      REFERENTIAL_ADMIN_URL: proxies.referentialAdmin.url,
      CONSOLE_ADMIN_URL: proxies.consoleAdmin.url
    },
    ...(input === undefined ? {} : { input })
  })

/** The CLI's own admin clients in process, for the admin operations no command makes. */
const operator = <A, E>(use: (clients: AdminClients["Service"]) => Effect.Effect<A, E>) =>
  Effect.runPromise(
    Effect.flatMap(AdminClients, use).pipe(
      Effect.provide(AdminClients.layer.pipe(
        Layer.provide(Layer.succeed(OperatorSettings, {
          secret: Redacted.make(system.secret),
          operator: "operator:blackbox",
          gatewayAdminUrl: proxies.gatewayAdmin.url,
          provisioningAdminUrl: proxies.provisioningAdmin.url,
          referentialAdminUrl: proxies.referentialAdmin.url,
          // No case here calls the dispatcher; the client is built with the others all the same.
          webhookAdminUrl: system.env["WEBHOOK_ADMIN_URL"] ?? "http://127.0.0.1:8087",
          consoleAdminUrl: proxies.consoleAdmin.url
        })),
        Layer.provide(FetchHttpClient.layer)
      ))
    )
  )

const publicApi = () => client(gateway2.baseUrl, writeToken)

/** What the replays could have changed, read through the first gateway and the admin ports (not captured). */
const snapshot = async () => {
  const api = system.api(writeToken)
  const read = async (path: string) => {
    const reply = await api.get(path)
    return `${reply.status} ${reply.text}`
  }
  return {
    applications: await read("/referentiel/applications"),
    functions: await read("/referentiel/functions/flat"),
    members: await read("/tenant/invitations/members"),
    invitations: JSON.stringify(await system.adminOk("provisioning", "GET", `/admin/tenants/${slug}/invitations`)),
    mail: JSON.stringify((await system.adminOk("provisioning", "GET", "/admin/mail")).flatMap((mail: { id: number }) => (mail.id > mailBefore ? [mail.id] : []))),
    partners: JSON.stringify(await system.adminOk("gateway", "GET", `/admin/tenants/${tenantId}/partner-clients`))
  }
}

const tables = [PublicApi, GatewayAdminApi, ReferentialAdminApi, ProvisioningAdminApi, ConsoleAdminApi].map((api) => routeTable(api))
const operationOf = (captured: Captured) => {
  const path = captured.target.split("?")[0]!
  for (const table of tables) {
    const route = table.match(captured.method, path)
    if (route !== undefined) return route.operationId
  }
  return `unmatched ${captured.method} ${path}`
}
const covered = new Set<string>()
const outcomes: Array<{ readonly operation: string; readonly trick: string; readonly status: number }> = []

/** Takes what the proxies captured since last time, replays each with every trick, and checks that nothing changed. */
const replayCaptured = async (decoy?: string): Promise<ReadonlyArray<Captured>> => {
  const fresh = Object.values(proxies).flatMap((proxy) => proxy.captured.splice(0).map((captured) => ({ captured, upstream: proxy.upstream })))
  expect(fresh.length).toBeGreaterThan(0)
  const before = await snapshot()
  for (const { captured, upstream } of fresh) {
    const operation = operationOf(captured)
    covered.add(operation)
    expect(captured.status, `${operation}: the genuine request`).toBeLessThan(300)
    for (const replay of replaysOf(captured, decoy)) {
      const reply = await sendReplay(upstream, captured, replay)
      outcomes.push({ operation, trick: replay.trick, status: reply.status })
      const label = `${operation} replayed with ${replay.trick}: ${JSON.stringify(reply.body)}`
      expect(reply.status >= 400 && reply.status < 500, label).toBe(true)
      // SCIM's routes refuse in SCIM's shape (docs/scim.md, "Errors"): a 401 without errorCode.
      if (replay.samePath) expect(reply.body?.errorCode ?? (reply.body?.status === "401" ? "UNAUTHENTICATED" : undefined), label).toBe("UNAUTHENTICATED")
      if (replay.trick === "the same request twice") expect(reply.body?.detail, label).toBe("The internal assertion has already been used.")
    }
  }
  expect(await snapshot()).toEqual(before)
  return fresh.map(({ captured }) => captured)
}

describe("captured internal assertions replayed against the services", () => {
  let appOne: Captured | undefined
  let revokeInvitation: Captured | undefined
  let revokePat: Captured | undefined
  let ssoUserSub: string

  it("operator calls of the CLI: tenant, PATs, seed, applications, invitations, mail", async () => {
    tenantId = (await portfolio(["tenant", "create", slug, "--admin-email", adminEmail])).tenantId
    await replayCaptured()
    writeToken = (await portfolio(["pat", "create", "--tenant", slug, "--email", adminEmail, "--scope", "write"])).token
    await replayCaptured()
    await portfolio(["seed", "demo", "--tenant", slug, "--applications", "3", "--functions", "4"])
    await replayCaptured()
    await portfolio(["app", "put", "--tenant", slug], JSON.stringify({ code: "APP-0001", name: "One", criticality: "LOW" }))
    await replayCaptured("APP-0002")
    await portfolio(["invitations", "list", "--tenant", slug])
    await replayCaptured()
    await portfolio(["mail", "list", "--to", adminEmail])
    await portfolio(["audit", "--tenant", slug, "--since", "2026-01-01T00:00:00Z"])
    await portfolio(["audit", "--unattributed"])
    await replayCaptured()
    const spare = await operator((clients) => clients.gateway.gatewayAdmin.createPat({
      payload: new CreatePatRequest({ tenantId, userSub: "spare", email: "spare@bb-replay.example", role: "viewer", scope: "read", days: 1 })
    }))
    await replayCaptured()
    await portfolio(["pat", "revoke", spare.id])
    revokePat = (await replayCaptured()).find((captured) => captured.target === "/admin/pats/revoke")
    await portfolio(["tenant", "welcome", slug, "--email", adminEmail])
    await replayCaptured()
  })

  it("operator calls of the CLI: PAT requests filed, listed, approved and denied; a member's tokens", async () => {
    const justification = "A nightly CI job reads the referential."
    const request = (scope: string) => portfolio(["pat", "request", "--tenant", slug, "--email", adminEmail, "--scope", scope, "--justification", justification])
    const approved = await request("read")
    await replayCaptured()
    await portfolio(["pat", "requests", "--tenant", slug, "--status", "pending"])
    await replayCaptured()
    await portfolio(["pat", "approve", approved.id])
    await replayCaptured()
    const denied = await request("write")
    await portfolio(["pat", "deny", denied.id, "--reason", "Read is enough."])
    await replayCaptured()
    await operator((clients) => clients.gateway.gatewayAdmin.listPats({ query: { tenantId, userSub: approved.userSub } }))
    await replayCaptured()
  })

  it("operator calls of the CLI: partner clients", async () => {
    const created = await portfolio(["partner", "create", "--tenant", slug, "--name", "bb-replay-erp", "--scope", "read"])
    await replayCaptured()
    await portfolio(["partner", "list", "--tenant", slug])
    await replayCaptured()
    await portfolio(["partner", "rotate-secret", created.client_id, "--grace", "1h"])
    await replayCaptured()
    await portfolio(["partner", "disable", created.client_id])
    await replayCaptured()
    await portfolio(["partner", "enable", created.client_id])
    await replayCaptured()
    // The console reads the gateway's log of these operator actions beside its own.
    const logged = await operator((clients) => clients.gateway.gatewayAdmin.listGatewaySecurityEvents({ params: { tenantId }, query: { limit: 50 } }))
    expect(logged.map((entry) => entry.action)).toContain("partner_client_enabled")
    await replayCaptured()
  })

  it("an identity tool's SCIM calls through the gateway, and the operator's SCIM tokens", async () => {
    const made = await portfolio(["scim", "token", "--tenant", slug, "--label", "bb-replay-okta"])
    await replayCaptured()
    await portfolio(["scim", "tokens", "--tenant", slug])
    await replayCaptured()
    const tool = client(gateway2.baseUrl, made.token)
    const scim = async (method: string, path: string, body?: unknown) => {
      const reply = await tool.call(method, `/scim/v2${path}`, {
        headers: { "content-type": "application/scim+json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      expect(reply.status, `${method} ${path}: ${reply.text}`).toBeLessThan(300)
      return reply.body
    }
    for (const path of ["/ServiceProviderConfig", "/ResourceTypes", "/ResourceTypes/User", "/Schemas", "/Schemas/urn:ietf:params:scim:schemas:core:2.0:User"]) {
      await scim("GET", path)
    }
    await replayCaptured()
    const userName = "scim.replay@bb-replay.example"
    const user = { schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName, emails: [{ value: userName, primary: true }], active: true }
    const created = await scim("POST", "/Users", user)
    await replayCaptured()
    await scim("GET", `/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`)
    await scim("GET", `/Users/${created.id}`)
    await replayCaptured()
    await scim("PUT", `/Users/${created.id}`, { ...user, displayName: "Replayed" })
    await replayCaptured()
    await scim("PATCH", `/Users/${created.id}`, { schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], Operations: [{ op: "Replace", path: "displayName", value: "Patched" }] })
    await replayCaptured()
    await scim("DELETE", `/Users/${created.id}`)
    await replayCaptured()
    await portfolio(["scim", "revoke", "--tenant", slug, made.id])
    await replayCaptured()
  })

  it("operator calls no command makes: SSO members, the console's sign-in and members pages, the function tree", async () => {
    const admin = (clients: AdminClients["Service"]) => clients.referential.referentialAdmin
    await operator((clients) => admin(clients).putApplication({ params: { tenantId, code: "APP-0002" }, payload: new ApplicationInput({ name: "Two" }) }))
    await replayCaptured("APP-0001")
    // createDas then submitDas, as the command makes them.
    await portfolio(["das", "submit", "--tenant", slug, "--application", "APP-0002", "--title", "Replayed"])
    await replayCaptured()
    ssoUserSub = (await operator((clients) => clients.provisioning.provisioningAdmin.provisionSsoMember({
      params: { slug },
      payload: new SsoMemberRequest({ userSub: "sso|replay-member", email: "sso.member@bb-replay.example" })
    }))).member.userSub
    await replayCaptured()
    // The console's calls: a sign-in check (the admin never set a password: a null account) and
    // the re-read of an account, by the subject the tenant's creation gave its admin.
    const provisioning = (clients: AdminClients["Service"]) => clients.provisioning.provisioningAdmin
    const checked = await operator((clients) => provisioning(clients).checkSignIn({ payload: new SignInCheckRequest({ email: adminEmail, password: "not the password" }) }))
    expect(checked.account).toBeNull()
    // And, that sign-in refused, the tenants whose logs file the failure.
    const failedIn = await operator((clients) => provisioning(clients).findFailedSignInTenants({ payload: new FailedSignInLookup({ email: adminEmail }) }))
    expect(failedIn.tenantIds).toEqual([tenantId])
    const { member } = await operator((clients) => provisioning(clients).findMember({ params: { slug, email: adminEmail } }))
    expect((await operator((clients) => provisioning(clients).getAccount({ params: { subject: member.userSub } }))).memberships).toHaveLength(1)
    await replayCaptured()
    // The gateway's, before it approves a PAT request: the requester's membership as it stands.
    expect((await operator((clients) => provisioning(clients).findMembership({ params: { tenantId, userSub: member.userSub } }))).arbRole).toBe("tenant-admin")
    await replayCaptured()
    // The console's members and invitations pages, acting as that admin: the reads, an invitation
    // made and revoked, and the removal of a member of its own (the SSO member above is the public
    // removal's).
    const actor = new ActorRequest({ actorSub: member.userSub })
    await operator((clients) => provisioning(clients).listMembersAs({ params: { tenantId }, query: actor }))
    await operator((clients) => provisioning(clients).listInvitationsAs({ params: { tenantId }, query: actor }))
    await replayCaptured()
    // The console reads provisioning's security log (the acceptances) beside its own.
    await operator((clients) => provisioning(clients).listProvisioningSecurityEvents({ params: { tenantId }, query: { limit: 50 } }))
    await replayCaptured()
    const invitation = await operator((clients) => provisioning(clients).inviteAs({
      params: { tenantId },
      payload: new InviteAsRequest({ ...actor, email: "console.invitee@bb-replay.example", arbRole: "architect" })
    }))
    expect(invitation.invitedByEmail).toBe(adminEmail)
    await replayCaptured()
    await operator((clients) => provisioning(clients).revokeInvitationAs({ params: { tenantId, id: invitation.id }, payload: actor }))
    await replayCaptured()
    const leaver = await operator((clients) => provisioning(clients).provisionSsoMember({
      params: { slug },
      payload: new SsoMemberRequest({ userSub: "sso|replay-console", email: "sso.console@bb-replay.example" })
    }))
    await replayCaptured()
    await operator((clients) => provisioning(clients).removeMemberAs({ params: { tenantId, userSub: leaver.member.userSub }, payload: actor }))
    await replayCaptured()
    const parent = await operator((clients) => admin(clients).createFunction({ params: { tenantId }, payload: new FunctionInput({ code: "F-PARENT", name: "Parent" }) }))
    const child = await operator((clients) => admin(clients).createFunction({ params: { tenantId }, payload: new FunctionInput({ code: "F-CHILD", name: "Child" }) }))
    await replayCaptured()
    const ids = { tenantId, id: child.id }
    await operator((clients) => admin(clients).updateFunction({ params: ids, payload: new FunctionInput({ code: "F-CHILD", name: "Child, renamed" }) }))
    await operator((clients) => admin(clients).moveFunction({ params: ids, payload: new MoveFunctionRequest({ parentId: parent.id }) }))
    await operator((clients) => admin(clients).linkApplication({ params: { ...ids, code: "APP-0001" } }))
    await replayCaptured(parent.id)
    await operator((clients) => admin(clients).unlinkApplication({ params: { ...ids, code: "APP-0001" } }))
    await operator((clients) => admin(clients).deleteFunction({ params: ids }))
    await replayCaptured(parent.id)
  })

  it("single sign-on: the operator's connection, the console's sign-in through the provider, and the tenant-admin's page", async () => {
    const clientSecret = "bb-replay-client-secret-0123456789abcdef"
    const op = await startOpenIdProvider({
      clients: [{ clientId: "portfolio-replay", clientSecret, redirectUris: [`${system.consoleUrl}/sso/${slug}/callback`] }],
      users: [{ sub: "idp-rita", email: `rita@${slug}.example`, emailVerified: true, password: "correct horse battery staple" }]
    })
    try {
      const provisioning = (clients: AdminClients["Service"]) => clients.provisioning.provisioningAdmin
      const connection = { issuer: op.issuer, clientId: "portfolio-replay", clientSecret: Redacted.make(clientSecret), domains: [`${slug}.example`] }
      await operator((clients) => provisioning(clients).setSsoConnection({ params: { slug }, payload: new SsoConnectionRequest(connection) }))
      await operator((clients) => provisioning(clients).getSsoConnection({ params: { slug } }))
      await operator((clients) => provisioning(clients).confirmSsoDomains({ params: { slug } }))
      expect((await operator((clients) => provisioning(clients).findSsoTenants({ payload: new SsoDomainLookup({ email: `rita@${slug}.example` }) }))).slugs)
        .toEqual([slug])
      await replayCaptured()
      // The console's two calls around the browser's trip to the provider.
      const begun = await operator((clients) => provisioning(clients).startSsoSignIn({ params: { slug } }))
      const callbackUrl = await op.signIn(begun.authorizationUrl, { login: `rita@${slug}.example`, password: "correct horse battery staple" })
      const account = await operator((clients) =>
        provisioning(clients).completeSsoSignIn({ params: { slug }, payload: new SsoSignInCompletion({ state: begun.state, callbackUrl }) }))
      expect(account.email).toBe(`rita@${slug}.example`)
      await replayCaptured()
      // The tenant-admin's page, as the console calls it for the admin.
      const { member } = await operator((clients) => provisioning(clients).findMember({ params: { slug, email: adminEmail } }))
      await replayCaptured()
      const actor = new ActorRequest({ actorSub: member.userSub })
      await operator((clients) => provisioning(clients).getSsoConnectionAs({ params: { tenantId }, query: actor }))
      await operator((clients) =>
        provisioning(clients).setSsoConnectionAs({ params: { tenantId }, payload: new SetSsoConnectionAsRequest({ ...connection, actorSub: member.userSub }) }))
      await operator((clients) => provisioning(clients).disableSsoConnectionAs({ params: { tenantId }, payload: actor }))
      await replayCaptured()
      await operator((clients) => provisioning(clients).setSsoConnection({ params: { slug }, payload: new SsoConnectionRequest(connection) }))
      await operator((clients) => provisioning(clients).disableSsoConnection({ params: { slug } }))
      await replayCaptured()
    } finally {
      await op.close()
    }
  })

  it("public calls forwarded by the gateway: every endpoint of the contract", async () => {
    const api = publicApi()
    const reads = [
      "/referentiel/applications?status=ACTIVE",
      "/referentiel/applications/APP-0001",
      "/referentiel/applications/APP-0001/changes?limit=5",
      "/referentiel/functions",
      "/referentiel/functions/flat",
      "/referentiel/functions/posi",
      "/referentiel/functions/search?q=parent",
      "/referentiel/functions/stats",
      "/referentiel/functions/by-application/APP-0001",
      "/tenant/invitations",
      "/tenant/invitations/members"
    ]
    for (const path of reads) expect((await api.get(path)).status, path).toBe(200)
    appOne = (await replayCaptured("APP-0002")).find((captured) => captured.target === "/api/v1/referentiel/applications/APP-0001")
    const flat = (await api.get("/referentiel/functions/flat")).body as Array<{ id: string }>
    expect((await api.get(`/referentiel/functions/${flat[0]!.id}`)).status).toBe(200)
    await replayCaptured(flat[1]!.id)
    const invited = await api.post("/tenant/invitations", { body: { email: "invitee@bb-replay.example", arbRole: "viewer" } })
    expect(invited.status).toBe(201)
    await replayCaptured()
    expect((await api.del(`/tenant/invitations/${invited.body.id}`)).status).toBe(204)
    revokeInvitation = (await replayCaptured(`members/${ssoUserSub}`))[0]
    expect((await api.del(`/tenant/invitations/members/${encodeURIComponent(ssoUserSub)}`)).status).toBe(204)
    await replayCaptured()
  })

  it("refuses the three replays the pen test reported, exactly as reported", async () => {
    const { serviceUrls, adminUrls } = system.system
    const send = (url: string, captured: Captured, target: string, body: string) =>
      sendRaw(url, { method: captured.method, target, headers: { "x-portfolio-assertion": captured.assertion, "content-type": "application/json" }, body: Buffer.from(body) })
    const before = await snapshot()
    const other = await send(serviceUrls.referential, appOne!, "/api/v1/referentiel/applications/APP-0002;/../APP-0001", "")
    const member = await send(serviceUrls.provisioning, revokeInvitation!, `/api/v1/tenant/invitations/members/${ssoUserSub};/../../${revokeInvitation!.target.split("/").at(-1)}`, "")
    const minted = await send(adminUrls.gateway, revokePat!, "/admin/pats;/../pats/revoke", JSON.stringify({
      tenantId: "00000000-0000-4000-8000-00000000beef",
      userSub: "attacker",
      email: "attacker@example.com",
      role: "tenant-admin",
      scope: "write"
    }))
    for (const reply of [other, member, minted]) expect(reply.status >= 400 && reply.status < 500, JSON.stringify(reply.body)).toBe(true)
    expect(JSON.stringify(minted.body)).not.toContain("ap_pat_")
    expect(await snapshot()).toEqual(before)
  })

  it("covered every operation of the contracts, and accepted none of the replays", () => {
    const operations = tables.flatMap((table) => table.routes.map((route) => route.operationId))
    expect(operations.filter((operation) => !covered.has(operation))).toEqual([])
    expect([...covered].filter((operation) => operation.startsWith("unmatched"))).toEqual([])
    expect(outcomes.length).toBeGreaterThan(operations.length * 8)
    expect(outcomes.filter((outcome) => outcome.status < 400 || outcome.status >= 500)).toEqual([])
    const byStatus = outcomes.reduce<Record<number, number>>((counts, { status }) => ({ ...counts, [status]: (counts[status] ?? 0) + 1 }), {})
    console.log(`${outcomes.length} replays of ${covered.size} operations, 0 accepted; answered by status: ${JSON.stringify(byStatus)}`)
  })
})
