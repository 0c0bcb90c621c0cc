import { HttpClient, HttpClientRequest } from "effect/http"
import { expect, layer } from "@effect/vitest"
import { CallerIdentity } from "@portfolio/domain"
import { signedRequest } from "@portfolio/platform/security"
import { Effect, Option, Redacted } from "effect"
import { AdminHttpLive } from "../../src/adapters/http/Servers.js"
import { IdentityProvider } from "../../src/ports/IdentityProvider.js"
import { acceptInvitation } from "../../src/usecases/Acceptance.js"
import { createInvitation } from "../../src/usecases/Invitations.js"
import { removeMember } from "../../src/usecases/Members.js"
import { invite, lastMailTo, pageClient, tenantWithAdmin, tokenOf } from "../support/Fixtures.js"
import { PgAdaptersLayer } from "../support/PgLayers.js"
import { testSecret, testServer } from "../support/TestServer.js"

const operator = new CallerIdentity({ tenantId: "00000000-0000-0000-0000-000000000000", subject: "operator", role: "operator", scope: "admin" })

const TestServer = testServer(AdminHttpLive, PgAdaptersLayer())

const password = "a very good password"

/** A call to the admin port, signed as the operator unless `caller` is null (no assertion at all). */
const call = (method: "GET" | "POST", path: string, body?: unknown, caller: CallerIdentity | null = operator) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const base = method === "GET" ? HttpClientRequest.get(path) : HttpClientRequest.post(path).pipe(HttpClientRequest.bodyJsonUnsafe(body))
    const response = yield* client.execute(caller === null ? base : signedRequest(testSecret, caller)(base))
    return { status: response.status, text: yield* response.text }
  }).pipe(Effect.map(({ status, text }) => ({ status, text, json: JSON.parse(text) as Record<string, any> })))

const signIn = (email: string, typed: string) => call("POST", "/admin/sign-in-checks", { email, password: typed })

/**
 * Quinn: tenant-admin of "<p>-zulu" (the welcome link accepted), architect of "<p>-alpha", removed
 * from "<p>-mid"; Rex: admin of "<p>-rex", who never set a password. Each case has its own people
 * (`p`), the database being the layer's, shared by the cases.
 */
const people = (p: string) =>
  Effect.gen(function*() {
    const email = `Quinn@${p}.test`
    const accept = Effect.flatMap(lastMailTo(email), (text) => acceptInvitation(tokenOf(text), Redacted.make(password), pageClient))
    const zulu = yield* tenantWithAdmin(`${p}-zulu`, email)
    yield* accept
    const alpha = yield* tenantWithAdmin(`${p}-alpha`)
    yield* createInvitation(alpha.caller, invite(email.toLowerCase(), "architect"))
    const inAlpha = yield* accept
    const mid = yield* tenantWithAdmin(`${p}-mid`)
    yield* createInvitation(mid.caller, invite(email, "viewer"))
    yield* accept
    yield* removeMember(mid.caller, zulu.admin.userSub)
    const rex = yield* tenantWithAdmin(`${p}-rex`, `rex@${p}.test`)
    // Set once, through the welcome link: the later links asked for it and left it as it was.
    const passwordSetAt = Option.getOrThrow(yield* (yield* IdentityProvider).findAccount(zulu.admin.userSub)).passwordSetAt
    // The answer as JSON: what the console decodes.
    const quinn = JSON.parse(JSON.stringify({
      subject: zulu.admin.userSub,
      email,
      memberships: [{ tenant: alpha.tenant, member: inAlpha }, { tenant: zulu.tenant, member: zulu.admin }],
      passwordSetAt,
      ssoOnlyTenantIds: []
    }))
    expect(quinn.passwordSetAt).toMatch(/^\d{4}-\d{2}-\d{2}T[\d:.]+Z$/)
    return { quinn, rex: JSON.parse(JSON.stringify(rex)) }
  })

layer(TestServer, { timeout: 60_000, excludeTestServices: true })("provisioning admin port: the console's sign-in", (it) => {
  it.effect("checkSignIn answers the account with its active memberships by slug, or null alike for a wrong password, an unknown e-mail and no password", () =>
    Effect.gen(function*() {
      const { quinn } = yield* people("check")
      const found = yield* signIn("QUINN@check.TEST", password)
      expect({ status: found.status, json: found.json }).toEqual({ status: 200, json: { account: quinn } })
      expect(found.json.account.memberships.map((m: any) => [m.tenant.slug, m.member.arbRole])).toEqual([
        ["check-alpha", "architect"],
        ["check-zulu", "tenant-admin"]
      ])
      for (const [email, typed] of [["quinn@check.test", "a very good password!"], ["nobody@check.test", password], ["rex@check.test", password]]) {
        const refused = yield* signIn(email!, typed!)
        expect({ status: refused.status, json: refused.json }, email).toEqual({ status: 200, json: { account: null } })
      }
    }))

  it.effect("findFailedSignInTenants answers the tenants where the e-mail's account is an active member, none for an unknown e-mail", () =>
    Effect.gen(function*() {
      const { quinn, rex } = yield* people("failed")
      const tenantsOf = (email: string) => call("POST", "/admin/failed-sign-in-lookups", { email })
      const known = yield* tenantsOf("QUINN@failed.TEST")
      // Alpha and zulu; mid's membership was removed.
      expect({ status: known.status, json: known.json }).toEqual({
        status: 200,
        json: { tenantIds: expect.arrayContaining(quinn.memberships.map((m: any) => m.tenant.id)) }
      })
      expect(known.json.tenantIds).toHaveLength(2)
      // An account without a password is a member all the same.
      expect((yield* tenantsOf("rex@failed.test")).json).toEqual({ tenantIds: [rex.tenant.id] })
      expect((yield* tenantsOf("nobody@failed.test")).json).toEqual({ tenantIds: [] })
      expect((yield* tenantsOf("not an e-mail")).status).toBe(400)
    }))

  it.effect("getAccount answers the same account for its subject, 404 for a subject of no account", () =>
    Effect.gen(function*() {
      const { quinn, rex } = yield* people("get")
      const found = yield* call("GET", `/admin/accounts/${quinn.subject}`)
      expect({ status: found.status, json: found.json }).toEqual({ status: 200, json: quinn })
      // An account without a password is an account all the same.
      const unset = yield* call("GET", `/admin/accounts/${rex.admin.userSub}`)
      expect({ status: unset.status, json: unset.json }).toEqual({
        status: 200,
        json: { subject: rex.admin.userSub, email: "rex@get.test", memberships: [{ tenant: rex.tenant, member: rex.admin }], passwordSetAt: null, ssoOnlyTenantIds: [] }
      })
      const unknown = yield* call("GET", "/admin/accounts/00000000-0000-4000-8000-000000000000")
      expect(unknown.json).toEqual({
        type: "https://errors.test/api/not-found",
        title: "Not found",
        status: 404,
        detail: "No account with this subject.",
        instance: "/admin/accounts/00000000-0000-4000-8000-000000000000",
        errorCode: "NOT_FOUND"
      })
      expect((yield* call("GET", "/admin/accounts/oidc%7C7")).status).toBe(404)
    }))

  it.effect("refuses a bad payload with 400 without repeating the password, a call without an assertion with 401, another role with 403", () =>
    Effect.gen(function*() {
      const long = "a secret that is far too long ".repeat(10)
      for (const body of [{ email: "quinn@bad.test" }, { email: "quinn@bad.test", password: "" }, { email: "quinn@bad.test", password: long }, { email: "not an e-mail", password }]) {
        const refused = yield* call("POST", "/admin/sign-in-checks", body)
        expect({ status: refused.status, errorCode: refused.json.errorCode }, JSON.stringify(body)).toEqual({ status: 400, errorCode: "INVALID_REQUEST" })
        expect(refused.text).not.toContain("far too long")
        expect(refused.text).not.toContain(password)
      }
      const anonymous = yield* call("POST", "/admin/sign-in-checks", { email: "quinn@bad.test", password }, null)
      expect({ status: anonymous.status, errorCode: anonymous.json.errorCode }).toEqual({ status: 401, errorCode: "UNAUTHENTICATED" })
      expect((yield* call("GET", "/admin/accounts/00000000-0000-4000-8000-000000000000", undefined, null)).status).toBe(401)
      const tenantAdmin = new CallerIdentity({ tenantId: operator.tenantId, subject: "x", role: "tenant-admin", scope: "write" })
      const refused = yield* call("POST", "/admin/sign-in-checks", { email: "quinn@bad.test", password }, tenantAdmin)
      expect({ status: refused.status, errorCode: refused.json.errorCode }).toEqual({ status: 403, errorCode: "INSUFFICIENT_SCOPE" })
    }))
})
