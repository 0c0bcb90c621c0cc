import { HttpClient, HttpClientRequest } from "effect/http"
import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { CallerIdentity } from "@portfolio/domain"
import { SecurityLog, signedRequest } from "@portfolio/platform/security"
import { Effect, Option, Redacted } from "effect"
import { AdminHttpLive } from "../../src/adapters/http/Servers.js"
import { SsoConnectionRepository } from "../../src/ports/SsoConnectionRepository.js"
import { discoveryServer, providerDocument } from "../support/DiscoveryServer.js"
import { PgAdaptersLayer } from "../support/PgLayers.js"
import { testSecret, testServer } from "../support/TestServer.js"

const operator = new CallerIdentity({ tenantId: "00000000-0000-0000-0000-000000000000", subject: "operator:ops", role: "operator", scope: "admin" })
const secret = "s3cr3t-of-the-client-0123456789"

const call = (method: "GET" | "POST" | "PUT" | "DELETE", path: string, body?: unknown) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const base = body === undefined
      ? HttpClientRequest.make(method)(path)
      : HttpClientRequest.make(method)(path).pipe(HttpClientRequest.bodyJsonUnsafe(body))
    const response = yield* client.execute(signedRequest(testSecret, operator)(base))
    const text = yield* response.text
    return { status: response.status, json: (text === "" ? null : JSON.parse(text)) as Record<string, any> }
  })

const connection = (issuer: string, overrides: Record<string, unknown> = {}) => ({
  issuer,
  clientId: "portfolio-app",
  clientSecret: secret,
  domains: ["acme.test"],
  ...overrides
})

const tenant = (slug: string) => call("POST", "/admin/tenants", { slug, adminEmail: `chief@${slug}.test` })

layer(testServer(AdminHttpLive, PgAdaptersLayer({ allowLoopbackIssuers: true, consoleUrl: "https://portfolio.example/console" })), {
  timeout: 60_000,
  excludeTestServices: true
})("a tenant's single sign-on connection on the admin port", (it) => {
  it.effect("is set after its issuer's discovery, shown with its redirect URI and never its secret, and disabled", () =>
    Effect.gen(function*() {
      const created = yield* tenant("ssoset")
      const provider = yield* discoveryServer(providerDocument)
      const set = yield* call("PUT", "/admin/tenants/ssoset/sso", connection(provider.issuer, {
        domains: ["acme.test", "acme.test", "acme-labs.test"],
        defaultRole: "contributor",
        roleClaim: "groups",
        roleMap: [{ value: "EA Team", role: "architect" }],
        required: true,
        breakGlass: ["Chief@ssoset.test"]
      }))
      expect(set.status).toBe(200)
      expect(set.json).toMatchObject({
        tenantId: created.json.tenant.id,
        issuer: provider.issuer,
        clientId: "portfolio-app",
        redirectUri: "https://portfolio.example/console/sso/ssoset/callback",
        domains: ["acme.test", "acme-labs.test"],
        defaultRole: "contributor",
        roleClaim: "groups",
        roleMap: [{ value: "EA Team", role: "architect" }],
        required: true,
        breakGlass: ["chief@ssoset.test"]
      })
      expect(JSON.stringify(set.json)).not.toContain(secret)
      const shown = yield* call("GET", "/admin/tenants/ssoset/sso")
      expect(shown).toEqual({ status: 200, json: set.json })
      expect((yield* call("POST", "/admin/sso-domain-lookups", { email: "Ana@ACME-Labs.test" })).json).toEqual({ slugs: ["ssoset"] })
      expect((yield* call("POST", "/admin/sso-domain-lookups", { email: "ana@labs.test" })).json).toEqual({ slugs: [] })

      // Sealed at rest, bound to its tenant: the row holds no clear secret, and its bytes copied
      // onto another tenant's row do not open there.
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ sealedClientSecret: Uint8Array }>`SELECT sealed_client_secret FROM provisioning.sso_connections`
      expect(Buffer.from(rows[0]!.sealedClientSecret).includes(Buffer.from(secret))).toBe(false)
      const connections = yield* SsoConnectionRepository
      expect(Option.map(yield* connections.findClientSecret(created.json.tenant.id), Redacted.value)).toEqual(Option.some(secret))
      const other = yield* tenant("ssoother")
      yield* call("PUT", "/admin/tenants/ssoother/sso", connection(provider.issuer, { clientSecret: "another-secret" }))
      yield* sql`UPDATE provisioning.sso_connections SET sealed_client_secret = ${rows[0]!.sealedClientSecret} WHERE tenant_id = ${other.json.tenant.id}`
      expect(yield* connections.findClientSecret(other.json.tenant.id)).toEqual(Option.none())

      expect((yield* call("DELETE", "/admin/tenants/ssoset/sso")).status).toBe(204)
      const gone = yield* call("GET", "/admin/tenants/ssoset/sso")
      expect(gone.status).toBe(404)
      expect(gone.json.detail).toBe("The tenant 'ssoset' has no single sign-on connection.")
      expect((yield* call("DELETE", "/admin/tenants/ssoset/sso")).status).toBe(404)
      expect(yield* connections.findClientSecret(created.json.tenant.id)).toEqual(Option.none())

      // Both actions in the tenant's security log, by the operator, without the secret.
      const events = yield* (yield* SecurityLog).list(created.json.tenant.id, { limit: 10 })
      expect(events.map((event) => [event.action, event.actorSub])).toEqual([
        ["sso_connection_disabled", "operator:ops"],
        ["sso_connection_set", "operator:ops"],
        ["member_invited", "operator:ops"]
      ])
      expect(events[1]!.detail).toEqual({ issuer: provider.issuer, clientId: "portfolio-app", domains: "acme.test,acme-labs.test", required: "true" })
      expect(JSON.stringify(events)).not.toContain(secret)
    }))

  it.effect("tells the console which memberships a password may not open: a required connection's, but for its break-glass accounts", () =>
    Effect.gen(function*() {
      const created = yield* tenant("ssoreq")
      const tenantId = created.json.tenant.id
      // Vic's account, from the tenant Vic administers; then a viewer of ssoreq too.
      const vic = (yield* call("POST", "/admin/tenants", { slug: "ssoreq-own", adminEmail: "vic@ssoreq.test" })).json.admin.userSub as string
      const viewer = yield* call("POST", "/admin/tenants/ssoreq/sso-members", { userSub: vic, email: "vic@ssoreq.test" })
      const provider = yield* discoveryServer(providerDocument)
      const ssoOnly = (subject: string) => Effect.map(call("GET", `/admin/accounts/${encodeURIComponent(subject)}`), (answer) => answer.json.ssoOnlyTenantIds)
      yield* call("PUT", "/admin/tenants/ssoreq/sso", connection(provider.issuer, { required: false }))
      expect(yield* ssoOnly(vic)).toEqual([])
      yield* call("PUT", "/admin/tenants/ssoreq/sso", connection(provider.issuer, { required: true, breakGlass: ["chief@ssoreq.test"] }))
      expect(viewer.status).toBe(200)
      expect(yield* ssoOnly(vic)).toEqual([tenantId])
      expect(yield* ssoOnly(created.json.admin.userSub)).toEqual([])
      yield* call("DELETE", "/admin/tenants/ssoreq/sso")
      expect(yield* ssoOnly(vic)).toEqual([])
    }))

  it.effect("refuses with 400 and writes nothing: a provider that lies or is not fit, a bad role map, a break-glass account that is no admin", () =>
    Effect.gen(function*() {
      yield* tenant("ssobad")
      const member = yield* call("POST", "/admin/tenants/ssobad/sso-members", { userSub: "oidc|v", email: "viewer@ssobad.test" })
      expect(member.status).toBe(200)
      const liar = yield* discoveryServer((issuer) => ({ ...providerDocument(issuer), issuer: "https://idp.example" }))
      const hmac = yield* discoveryServer((issuer) => ({ ...providerDocument(issuer), id_token_signing_alg_values_supported: ["HS256"] }))
      const noPkce = yield* discoveryServer((issuer) => ({ ...providerDocument(issuer), code_challenge_methods_supported: ["plain"] }))
      const fine = yield* discoveryServer(providerDocument)
      const closed = yield* discoveryServer(providerDocument)
      closed.close()
      const cases: Array<[Record<string, unknown>, RegExp]> = [
        [connection(liar.issuer), /^The issuer cannot be used: its discovery document was refused \(.*issuer.*\)\.$/],
        [connection(hmac.issuer), /^The issuer cannot be used: it signs id tokens with none of the asymmetric algorithms we accept \(it offers HS256\)\.$/],
        [connection(noPkce.issuer), /^The issuer cannot be used: it does not offer PKCE with S256/],
        [connection(closed.issuer), /^The issuer cannot be used: its discovery document could not be reached \(ECONNREFUSED\)\.$/],
        // Not a public address: whoever sets a connection must not make provisioning call into its network.
        [connection("https://10.1.2.3"), /^The issuer cannot be used: its discovery document cannot be fetched: 10\.1\.2\.3 is not a public address \(private\)\.$/],
        [connection("https://metadata.google.internal"), /is not a public address \(metadata\)\.$/],
        [connection("http://idp.example"), /^The issuer must be https \(plain http only on a loopback address\)\.$/],
        [connection("https://user:pw@idp.example"), /^The issuer must not carry credentials\.$/],
        [connection(fine.issuer, { roleMap: [{ value: "g", role: "viewer" }] }), /^A role map needs the claim whose values it maps \(roleClaim\)\.$/],
        [connection(fine.issuer, { roleClaim: "groups", roleMap: [{ value: "g", role: "viewer" }, { value: "g", role: "architect" }] }), /^The role map names the value 'g' twice\.$/],
        [connection(fine.issuer, { breakGlass: ["viewer@ssobad.test"] }), /^Break-glass accounts must be active tenant-admins of 'ssobad': viewer@ssobad.test is not\.$/],
        [connection(fine.issuer, { breakGlass: ["nobody@ssobad.test"] }), /is not\.$/]
      ]
      for (const [body, detail] of cases) {
        const refused = yield* call("PUT", "/admin/tenants/ssobad/sso", body)
        expect(refused.status, JSON.stringify(body)).toBe(400)
        expect(refused.json.detail).toMatch(detail)
      }
      // Refused by the contract before any use case: no domain, a domain in capitals, an unknown role.
      for (const body of [connection(fine.issuer, { domains: [] }), connection(fine.issuer, { domains: ["ACME.test"] }), connection(fine.issuer, { defaultRole: "owner" })]) {
        expect((yield* call("PUT", "/admin/tenants/ssobad/sso", body)).status).toBe(400)
      }
      expect((yield* call("GET", "/admin/tenants/ssobad/sso")).status).toBe(404)
      expect((yield* call("PUT", "/admin/tenants/nosuch/sso", connection(fine.issuer))).status).toBe(404)
    }))
})

layer(testServer(AdminHttpLive, PgAdaptersLayer()), { timeout: 60_000, excludeTestServices: true })("without SSO_ALLOW_LOOPBACK_ISSUERS", (it) => {
  it.effect("refuses a plain-http issuer even on loopback", () =>
    Effect.gen(function*() {
      yield* tenant("ssoprod")
      const provider = yield* discoveryServer(providerDocument)
      const refused = yield* call("PUT", "/admin/tenants/ssoprod/sso", connection(provider.issuer))
      expect(refused.status).toBe(400)
      expect(refused.json.detail).toBe("The issuer must be https.")
    }))
})
