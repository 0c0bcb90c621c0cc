import { HttpApiClient } from "effect/http-api"
import { HttpClient, HttpClientRequest } from "effect/http"
import { expect, layer } from "@effect/vitest"
import { ActorRequest, CallerIdentity, ProvisioningAdminApi, SetSsoConnectionAsRequest } from "@portfolio/domain"
import { operatorClient, SecurityLog, signedRequest } from "@portfolio/platform/security"
import { Effect, Option, Redacted } from "effect"
import { AdminHttpLive } from "../../src/adapters/http/Servers.js"
import { SsoConnectionRepository } from "../../src/ports/SsoConnectionRepository.js"
import { provisionSsoMember } from "../../src/usecases/Tenants.js"
import { discoveryServer, providerDocument } from "../support/DiscoveryServer.js"
import { tenantWithAdmin } from "../support/Fixtures.js"
import { PgAdaptersLayer } from "../support/PgLayers.js"
import { testSecret, testServer } from "../support/TestServer.js"

/** The console's operator assertion, as it signs for a member. */
const consoleOperator = new CallerIdentity({ tenantId: "00000000-0000-0000-0000-000000000000", subject: "console:chief@example.test", role: "operator", scope: "admin" })
const operator = new CallerIdentity({ tenantId: "00000000-0000-0000-0000-000000000000", subject: "operator:ops", role: "operator", scope: "admin" })
const secret = "s3cr3t-of-the-tenant-admin-0123456789"

interface Reply {
  readonly status: number
  readonly json: any
}

/** Every answer of the admin port in this file, so that none is found to carry the client secret. */
const answers: Array<string> = []

const call = (caller: CallerIdentity, method: "GET" | "POST" | "PUT", path: string, body?: unknown) =>
  Effect.gen(function*() {
    const request = body === undefined ? HttpClientRequest.make(method)(path) : HttpClientRequest.make(method)(path).pipe(HttpClientRequest.bodyJsonUnsafe(body))
    const response = yield* (yield* HttpClient.HttpClient).execute(signedRequest(testSecret, caller)(request))
    const text = yield* response.text
    answers.push(text)
    return { status: response.status, json: text === "" ? null : JSON.parse(text) } as Reply
  })

const ssoPath = (tenantId: string) => `/admin/console/tenants/${tenantId}/sso`

/** The three console doors, as the console calls them for `actorSub`. */
const doors = (tenantId: string, actorSub: string, issuer: string) => ({
  getSsoConnectionAs: call(consoleOperator, "GET", `${ssoPath(tenantId)}?actorSub=${encodeURIComponent(actorSub)}`),
  setSsoConnectionAs: call(consoleOperator, "PUT", ssoPath(tenantId), { actorSub, issuer, clientId: "portfolio-app", clientSecret: secret, domains: ["acme.test"] }),
  disableSsoConnectionAs: call(consoleOperator, "POST", `${ssoPath(tenantId)}/disable`, { actorSub })
})

/** A problem without its `instance`, which names the path it was answered on. */
const problem = ({ json, status }: Reply) => {
  const { instance: _, ...rest } = json as Record<string, unknown>
  return { status, ...rest }
}

/** A tenant whose first admin's e-mail is held in mixed case, with a viewer, an architect and a second tenant-admin. */
const tenant = (slug: string) =>
  Effect.gen(function*() {
    const { admin: chief, tenant } = yield* tenantWithAdmin(slug, `Chief@${slug}.test`)
    const member = (userSub: string, arbRole: "viewer" | "architect" | "tenant-admin") =>
      Effect.map(provisionSsoMember({ slug, userSub, email: `${userSub.replace("|", ".")}@${slug}.test`, arbRole }), ({ member }) => member)
    return {
      chief,
      tenant,
      viewer: yield* member("sso|viewer", "viewer"),
      architect: yield* member("sso|architect", "architect"),
      deputy: yield* member("sso|deputy", "tenant-admin")
    }
  })

layer(testServer(AdminHttpLive, PgAdaptersLayer({ allowLoopbackIssuers: true, consoleUrl: "https://portfolio.example/console" })), {
  timeout: 60_000,
  excludeTestServices: true
})("provisioning admin port: the console setting a tenant's single sign-on for a tenant-admin", (it) => {
  it.effect("leads a work e-mail to a tenant-admin's connection only once an operator confirmed its domains, and only for those domains", () =>
    Effect.gen(function*() {
      const { chief, tenant: { id } } = yield* tenant("csso-dom")
      const provider = yield* discoveryServer(providerDocument)
      const lookup = (email: string) => Effect.map(call(operator, "POST", "/admin/sso-domain-lookups", { email }), (reply) => reply.json.slugs)
      const setAs = (domains: ReadonlyArray<string>) =>
        call(consoleOperator, "PUT", ssoPath(id), { actorSub: chief.userSub, issuer: provider.issuer, clientId: "c", clientSecret: secret, domains })
      // Anyone can name gmail.com: not a way to send its people to this tenant's provider.
      expect((yield* setAs(["csso-dom.test", "gmail.com"])).json.domainsConfirmed).toBe(false)
      expect(yield* lookup("ana@gmail.com")).toEqual([])
      expect(yield* lookup("ana@csso-dom.test")).toEqual([])
      const confirmed = yield* call(operator, "POST", "/admin/tenants/csso-dom/sso/confirm-domains")
      expect(confirmed.json.domainsConfirmed).toBe(true)
      expect(yield* lookup("ana@csso-dom.test")).toEqual(["csso-dom"])
      // The tenant-admin narrows them: still confirmed. Adds one: no longer, until an operator confirms again.
      expect((yield* setAs(["csso-dom.test"])).json.domainsConfirmed).toBe(true)
      expect((yield* setAs(["csso-dom.test", "other.test"])).json.domainsConfirmed).toBe(false)
      expect(yield* lookup("ana@csso-dom.test")).toEqual([])
      const entries = yield* (yield* SecurityLog).list(id, { limit: 10 })
      expect(entries.map((entry) => entry.action)).toContain("sso_domains_confirmed")
    }))

  it.effect("a tenant-admin sets, reads and disables the connection, as the operator's endpoints do; provisioning logs none of it", () =>
    Effect.gen(function*() {
      const { chief, deputy, tenant: { id } } = yield* tenant("csso-set")
      const provider = yield* discoveryServer(providerDocument)

      const none = yield* call(consoleOperator, "GET", `${ssoPath(id)}?actorSub=${encodeURIComponent(chief.userSub)}`)
      expect(problem(none)).toMatchObject({ status: 404, errorCode: "NOT_FOUND", detail: "The tenant 'csso-set' has no single sign-on connection." })

      const set = yield* call(consoleOperator, "PUT", ssoPath(id), {
        actorSub: chief.userSub,
        issuer: provider.issuer,
        clientId: "portfolio-app",
        clientSecret: secret,
        domains: ["acme.test", "acme-labs.test"],
        defaultRole: "contributor",
        roleClaim: "groups",
        roleMap: [{ value: "CN=EA Team,OU=Groups", role: "architect" }],
        required: true,
        breakGlass: ["Chief@csso-set.test"]
      })
      expect(set.status).toBe(200)
      expect(set.json).toMatchObject({
        tenantId: id,
        issuer: provider.issuer,
        clientId: "portfolio-app",
        redirectUri: "https://portfolio.example/console/sso/csso-set/callback",
        domains: ["acme.test", "acme-labs.test"],
        defaultRole: "contributor",
        roleClaim: "groups",
        roleMap: [{ value: "CN=EA Team,OU=Groups", role: "architect" }],
        required: true,
        breakGlass: ["chief@csso-set.test"]
      })
      expect(set.json).not.toHaveProperty("clientSecret")
      // The connection the operator reads is the one the tenant-admin set, its secret kept.
      expect(yield* call(consoleOperator, "GET", `${ssoPath(id)}?actorSub=${encodeURIComponent(deputy.userSub)}`)).toEqual({ status: 200, json: set.json })
      expect(yield* call(operator, "GET", "/admin/tenants/csso-set/sso")).toEqual({ status: 200, json: set.json })
      const connections = yield* SsoConnectionRepository
      expect(Option.map(yield* connections.findClientSecret(id), Redacted.value)).toEqual(Option.some(secret))

      // Another admin replaces it whole, secret included.
      const replaced = yield* call(consoleOperator, "PUT", ssoPath(id), { actorSub: deputy.userSub, issuer: provider.issuer, clientId: "other-app", clientSecret: "another-secret", domains: ["acme.test"] })
      expect(replaced.json).toMatchObject({ clientId: "other-app", defaultRole: "viewer", roleClaim: null, roleMap: [], required: false, breakGlass: [] })
      expect(Option.map(yield* connections.findClientSecret(id), Redacted.value)).toEqual(Option.some("another-secret"))

      const disable = () => call(consoleOperator, "POST", `${ssoPath(id)}/disable`, { actorSub: chief.userSub })
      expect(yield* disable()).toEqual({ status: 204, json: null })
      expect((yield* call(operator, "GET", "/admin/tenants/csso-set/sso")).status).toBe(404)
      expect(yield* connections.findClientSecret(id)).toEqual(Option.none())
      expect(problem(yield* disable())).toMatchObject({ status: 404, errorCode: "NOT_FOUND", detail: "The tenant 'csso-set' has no single sign-on connection." })

      // The console records these with the member's browser address; provisioning must not record them twice.
      const events = yield* (yield* SecurityLog).list(id, { limit: 50 })
      expect(events.filter((event) => event.action.startsWith("sso_"))).toEqual([])
      expect(answers.join("\n")).not.toContain(secret)
      expect(answers.join("\n")).not.toContain("another-secret")
    }))

  it.effect("refuses as the operator's endpoint does (400 naming what is wrong) and writes nothing", () =>
    Effect.gen(function*() {
      const { chief, tenant: { id }, viewer } = yield* tenant("csso-bad")
      const liar = yield* discoveryServer((issuer) => ({ ...providerDocument(issuer), issuer: "https://idp.example" }))
      const fine = yield* discoveryServer(providerDocument)
      const put = (overrides: Record<string, unknown>) =>
        call(consoleOperator, "PUT", ssoPath(id), { actorSub: chief.userSub, issuer: fine.issuer, clientId: "portfolio-app", clientSecret: secret, domains: ["acme.test"], ...overrides })
      const cases: Array<[Record<string, unknown>, RegExp]> = [
        [{ issuer: liar.issuer }, /^The issuer cannot be used: its discovery document was refused \(.*issuer.*\)\.$/],
        [{ roleMap: [{ value: "g", role: "viewer" }] }, /^A role map needs the claim whose values it maps \(roleClaim\)\.$/],
        [{ breakGlass: [viewer.userEmail] }, /^Break-glass accounts must be active tenant-admins of 'csso-bad': .+ is not\.$/]
      ]
      for (const [overrides, detail] of cases) {
        const refused = yield* put(overrides)
        expect({ overrides, ...problem(refused) }).toMatchObject({ overrides, status: 400, errorCode: "INVALID_REQUEST" })
        expect(refused.json.detail).toMatch(detail)
      }
      // Refused by the contract: no domain, no secret, no actor.
      expect((yield* put({ domains: [] })).status).toBe(400)
      expect((yield* put({ clientSecret: "" })).status).toBe(400)
      expect((yield* put({ actorSub: "" })).status).toBe(400)
      expect((yield* call(operator, "GET", "/admin/tenants/csso-bad/sso")).status).toBe(404)
      expect(answers.join("\n")).not.toContain(secret)
    }))

  it.effect("a viewer or an architect gets 403 INSUFFICIENT_SCOPE on each door, and the connection is neither read nor changed", () =>
    Effect.gen(function*() {
      const { architect, tenant: { id }, viewer } = yield* tenant("csso-viewer")
      const provider = yield* discoveryServer(providerDocument)
      const byOperator = yield* call(operator, "PUT", "/admin/tenants/csso-viewer/sso", { issuer: provider.issuer, clientId: "ops-app", clientSecret: "ops-secret", domains: ["acme.test"] })
      expect(byOperator.status).toBe(200)
      for (const actor of [viewer, architect]) {
        for (const [name, door] of Object.entries(doors(id, actor.userSub, provider.issuer))) {
          const refused = yield* door
          expect({ name, ...problem(refused) }).toMatchObject({ name, status: 403, errorCode: "INSUFFICIENT_SCOPE" })
          expect(refused.json.detail).toMatch(new RegExp(`^role '${actor.arbRole}' does not allow .+ the single sign-on connection, which requires the tenant-admin role$`))
          expect(JSON.stringify(refused.json)).not.toContain("ops-app")
        }
      }
      expect(yield* call(operator, "GET", "/admin/tenants/csso-viewer/sso")).toEqual({ status: 200, json: byOperator.json })
      expect(Option.map(yield* (yield* SsoConnectionRepository).findClientSecret(id), Redacted.value)).toEqual(Option.some("ops-secret"))
    }))

  it.effect("an actor who is no active member of the tenant (another tenant's admin, a removed admin, nobody) gets 401 on each door", () =>
    Effect.gen(function*() {
      const { chief, deputy, tenant: { id } } = yield* tenant("csso-gone")
      const other = yield* tenantWithAdmin("csso-gone-other")
      const provider = yield* discoveryServer(providerDocument)
      const removed = yield* call(consoleOperator, "POST", `/admin/console/tenants/${id}/members/${encodeURIComponent(deputy.userSub)}/remove`, { actorSub: chief.userSub })
      expect(removed.status).toBe(204)
      const expected = { status: 401, type: "https://errors.test/api/unauthenticated", title: "Unauthenticated", detail: "The token has been revoked.", errorCode: "UNAUTHENTICATED" }
      for (const actorSub of [other.admin.userSub, deputy.userSub, "never-a-member"]) {
        for (const [name, door] of Object.entries(doors(id, actorSub, provider.issuer))) {
          expect({ name, actorSub, ...problem(yield* door) }).toEqual({ name, actorSub, ...expected })
        }
      }
      // The other tenant's admin acts in their own tenant only, and a tenant that does not exist reads the same.
      for (const [name, door] of Object.entries(doors("00000000-0000-4000-8000-000000000000", chief.userSub, provider.issuer))) {
        expect({ name, ...problem(yield* door) }).toEqual({ name, ...expected })
      }
      expect((yield* call(operator, "GET", "/admin/tenants/csso-gone/sso")).status).toBe(404)
      expect((yield* call(consoleOperator, "GET", ssoPath(id))).status).toBe(400)
    }))

  it.effect("the typed client sends and decodes the console doors", () =>
    Effect.gen(function*() {
      const { chief, tenant: { id }, viewer } = yield* tenant("csso-typed")
      const provider = yield* discoveryServer(providerDocument)
      const client = yield* HttpApiClient.make(ProvisioningAdminApi, {
        transformClient: operatorClient({ baseUrl: "", secret: testSecret, operator: consoleOperator.subject })
      })
      const api = client.provisioningAdmin
      const params = { tenantId: id }
      expect(yield* Effect.flip(api.getSsoConnectionAs({ params, query: { actorSub: chief.userSub } }))).toMatchObject({ _tag: "NotFound" })
      const request = new SetSsoConnectionAsRequest({
        actorSub: chief.userSub,
        issuer: provider.issuer,
        clientId: "typed-app",
        clientSecret: Redacted.make(secret),
        domains: ["typed.test"]
      })
      const set = yield* api.setSsoConnectionAs({ params, payload: request })
      expect(set).toMatchObject({ clientId: "typed-app", domains: ["typed.test"], redirectUri: "https://portfolio.example/console/sso/csso-typed/callback" })
      expect((yield* api.getSsoConnectionAs({ params, query: { actorSub: chief.userSub } })).secretSetAt).toEqual(set.secretSetAt)
      const refused = yield* Effect.flip(api.setSsoConnectionAs({ params, payload: new SetSsoConnectionAsRequest({ ...request, issuer: "http://idp.example" }) }))
      expect(refused).toMatchObject({ _tag: "InvalidRequest", detail: "The issuer must be https (plain http only on a loopback address)." })
      expect(yield* Effect.flip(api.disableSsoConnectionAs({ params, payload: new ActorRequest({ actorSub: viewer.userSub }) }))).toMatchObject({ _tag: "InsufficientScope" })
      yield* api.disableSsoConnectionAs({ params, payload: new ActorRequest({ actorSub: chief.userSub }) })
      expect(yield* Effect.flip(api.disableSsoConnectionAs({ params, payload: new ActorRequest({ actorSub: chief.userSub }) }))).toMatchObject({ _tag: "NotFound" })
    }))
})
