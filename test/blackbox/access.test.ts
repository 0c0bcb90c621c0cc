import { CallerIdentity } from "@portfolio/domain"
import { signAssertion } from "@portfolio/platform/security"
import { randomUUID } from "node:crypto"
import { beforeAll, describe, expect, it } from "vitest"
import { send } from "../support/http.js"
import { breakChecksum, checksumAlphabet, forgeToken } from "../support/pat.js"
import { expectProblem, expectRateLimitHeaders } from "../support/problem.js"
import { withDatabase } from "../support/provisioning.js"
import type { CreatedPat, CreatedTenant } from "../support/system.js"
import { useSharedSystem } from "../support/useSystem.js"

const system = useSharedSystem()

let tenant: CreatedTenant
let other: CreatedTenant
let read: CreatedPat
let write: CreatedPat
let architect: CreatedPat
let revokeByToken: CreatedPat
let revokeById: CreatedPat

const apps = "/api/v1/referentiel/applications"

beforeAll(async () => {
  ;[tenant, other] = await Promise.all([system.createTenant("bb-access"), system.createTenant("bb-other")])
  ;[read, write, revokeByToken, revokeById] = await Promise.all([
    system.createPat(tenant, "read"),
    system.createPat(tenant, "write"),
    system.createPat(tenant, "read"),
    system.createPat(tenant, "read")
  ])
  await Promise.all([
    system.putApplication(tenant, { code: "APP-1", name: "One", status: "ACTIVE" }),
    system.putApplication(other, { code: "APP-OTHER", name: "Other tenant's", status: "ACTIVE" })
  ])
  // A holder without tenant-admin: minted by the operator on the gateway's admin API.
  const created = await system.adminOk("gateway", "POST", "/admin/pats", {
    tenantId: tenant.id,
    userSub: "architect-sub",
    email: "architect@bb-access.example",
    role: "architect",
    scope: "write"
  })
  architect = { id: created.id, token: created.token }
}, 240_000)

describe("401 Unauthenticated", () => {
  const cases: ReadonlyArray<[string, () => Record<string, string>]> = [
    ["no Authorization header", () => ({})],
    ["the Basic scheme", () => ({ authorization: `Basic ${Buffer.from("user:pass").toString("base64")}` })],
    ["another scheme with a valid token", () => ({ authorization: `Token ${read.token}` })],
    ["Bearer and nothing", () => ({ authorization: "Bearer " })],
    ["a malformed token", () => ({ authorization: "Bearer not-a-token" })],
    ["a token with a bad checksum", () => ({ authorization: `Bearer ${breakChecksum(read.token)}` })],
    ["a token with one character more", () => ({ authorization: `Bearer ${read.token}x` })],
    ["a token prefix only", () => ({ authorization: "Bearer ap_pat_" })]
  ]

  it.each(cases)("answers %s with a 401 problem", async (_name, headers) => {
    const reply = await send(`${system.baseUrl}/referentiel/applications`, { headers: headers() })
    expectProblem(reply, "UNAUTHENTICATED", apps)
    expectRateLimitHeaders(reply)
  })

  it("answers 401 for a well-formed token with a valid checksum that was never issued", async () => {
    // The checksum is public (docs/product-rules.md#authentication): verify the real tokens offline before forging one.
    const alphabet = checksumAlphabet([read.token, write.token, architect.token])
    expect(alphabet, `checksums of ${read.token} and ${write.token} do not verify as base62 CRC32`).toBeDefined()
    const reply = await system.api(forgeToken(alphabet!)).get("/referentiel/applications")
    expectProblem(reply, "UNAUTHENTICATED", apps)
  })

  it("answers 401 once a token is revoked with `portfolio pat revoke`, by token or by id", async () => {
    const [byToken, byId] = [revokeByToken, revokeById]
    expect((await system.api(byToken.token).get("/referentiel/applications")).status).toBe(200)
    expect((await system.api(byId.token).get("/referentiel/applications")).status).toBe(200)

    const revokedByToken = await system.cliJson(["pat", "revoke", byToken.token])
    expect(revokedByToken).toEqual({ id: byToken.id, revokedAt: expect.any(String) })
    const revokedById = await system.cliJson(["pat", "revoke", byId.id])
    expect(revokedById).toEqual({ id: byId.id, revokedAt: expect.any(String) })

    expectProblem(await system.api(byToken.token).get("/referentiel/applications"), "UNAUTHENTICATED", apps)
    expectProblem(await system.api(byId.token).get("/referentiel/applications"), "UNAUTHENTICATED", apps)
    // Other tokens of the same holder keep working.
    expect((await system.api(read.token).get("/referentiel/applications")).status).toBe(200)
  }, 120_000)

  it("answers 401 for an expired token", async () => {
    const expiring = await system.createPat(tenant, "read")
    expect((await system.api(expiring.token).get("/referentiel/applications")).status).toBe(200)
    // `--days` is at least 1 and no interface moves a token's expiry: the test moves it in the
    // gateway's own table, as a day passing would.
    await withDatabase(system, async (client) => {
      const moved = await client.query("UPDATE gateway.personal_access_tokens SET expires_at = now() - interval '1 minute' WHERE id = $1", [expiring.id])
      if (moved.rowCount !== 1) throw new Error(`no token ${expiring.id} to expire`)
    })
    // Past the 1-second lifetime of the verification the call above left in the gateway's cache.
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    const reply = await system.api(expiring.token).get("/referentiel/applications")
    expectProblem(reply, "UNAUTHENTICATED", apps)
    expect(reply.body.detail).toMatch(/expired/)
    expect((await system.api(read.token).get("/referentiel/applications")).status).toBe(200)
  })
})

describe("403 Insufficient scope", () => {
  it("refuses a read token on a write endpoint, naming both scopes", async () => {
    const reply = await system.api(read.token).post("/tenant/invitations", { body: { email: "new@bb-access.example", arbRole: "viewer" } })
    expectProblem(reply, "INSUFFICIENT_SCOPE", "/api/v1/tenant/invitations")
    expectRateLimitHeaders(reply)
    expect(reply.body.detail).toContain("'read'")
    expect(reply.body.detail).toContain("'write'")
  })

  it.each([
    ["DELETE", `/tenant/invitations/${randomUUID()}`],
    ["DELETE", "/tenant/invitations/members/someone"]
  ])("refuses a read token on %s %s", async (method, path) => {
    const reply = await system.api(read.token).call(method, path)
    expectProblem(reply, "INSUFFICIENT_SCOPE", `/api/v1${path}`)
  })

  it.each([
    ["GET", "/tenant/invitations"],
    ["GET", "/tenant/invitations/members"],
    ["POST", "/tenant/invitations"],
    ["DELETE", `/tenant/invitations/${randomUUID()}`],
    ["DELETE", "/tenant/invitations/members/someone"]
  ])("refuses a holder who is not tenant-admin on %s %s, even with a write token", async (method, path) => {
    const reply = await system.api(architect.token).call(method, path, method === "POST" ? { body: { email: "x@bb-access.example", arbRole: "viewer" } } : {})
    expectProblem(reply, "INSUFFICIENT_SCOPE", `/api/v1${path}`)
    expect(reply.body.detail).toContain("tenant-admin")
  })

  it("lets the same non-admin holder read the referential", async () => {
    const reply = await system.api(architect.token).get("/referentiel/applications")
    expect({ status: reply.status, codes: reply.body.map((a: any) => a.code) }).toEqual({ status: 200, codes: ["APP-1"] })
  })
})

describe("404 Not found", () => {
  it.each([
    ["GET", "/api/v1/nope"],
    ["GET", "/api/v1/referentiel"],
    ["GET", "/api/v1/referentiel/applications/APP-1/changes/extra"],
    ["DELETE", "/api/v1/referentiel/applications/APP-1"],
    ["PUT", "/api/v1/referentiel/applications/APP-1"],
    ["PATCH", "/api/v1/referentiel/applications/APP-1"],
    ["POST", "/api/v1/referentiel/functions"],
    ["POST", "/api/v1/referentiel/applications"],
    ["GET", "/api/v1/admin/pats"],
    ["POST", "/api/v1/admin/pats"],
    ["GET", "/api/v1/admin/tenants/bb-access"]
  ])("answers a valid PAT on %s %s with 404", async (method, path) => {
    const reply = await send(`${system.system.gatewayUrl}${path}`, { method, token: write.token })
    expectProblem(reply, "NOT_FOUND", path)
    expectRateLimitHeaders(reply)
  })

  it("answers 404 for an unknown application code", async () => {
    expectProblem(await system.api(read.token).get("/referentiel/applications/APP-404"), "NOT_FOUND", `${apps}/APP-404`)
  })

  it("never routes the referential admin API, not even with an operator assertion", async () => {
    const adminPath = `/admin/tenants/${tenant.id}/applications/APP-SNEAK`
    for (const path of [`/api/v1${adminPath}`, adminPath]) {
      const assertion = signAssertion(system.secret, new CallerIdentity({ tenantId: tenant.id, subject: "x", role: "operator", scope: "admin" }), {
        audience: "referential",
        method: "PUT",
        target: path,
        body: JSON.stringify({ name: "Sneaked in" })
      })
      const reply = await send(`${system.system.gatewayUrl}${path}`, {
        method: "PUT",
        token: write.token,
        headers: { "x-portfolio-assertion": assertion },
        body: { name: "Sneaked in" }
      })
      expectProblem(reply, "NOT_FOUND", path)
    }
    expectProblem(await system.api(read.token).get("/referentiel/applications/APP-SNEAK"), "NOT_FOUND", `${apps}/APP-SNEAK`)
  })
})

describe("internal assertions", () => {
  const serviceApps = () => `${system.system.serviceUrls.referential}${apps}`
  const identity = () => new CallerIdentity({ tenantId: tenant.id, subject: "someone", role: "viewer", scope: "read" })
  const listing = { audience: "referential", method: "GET", target: apps } as const

  it("lets a correctly signed assertion through (control)", async () => {
    const reply = await send(serviceApps(), { headers: { "x-portfolio-assertion": signAssertion(system.secret, identity(), listing) } })
    expect({ status: reply.status, codes: reply.body.map((a: any) => a.code) }).toEqual({ status: 200, codes: ["APP-1"] })
  })

  const refusals: ReadonlyArray<[string, () => Record<string, string>]> = [
    ["no assertion", () => ({})],
    ["a PAT instead of an assertion", () => ({ authorization: `Bearer ${read.token}` })],
    ["an assertion signed with another secret", () => ({ "x-portfolio-assertion": signAssertion("f".repeat(64), identity(), listing) })],
    ["an assertion signed for another path", () => ({ "x-portfolio-assertion": signAssertion(system.secret, identity(), { ...listing, target: `${apps}/APP-1` }) })],
    ["an assertion signed for another method", () => ({ "x-portfolio-assertion": signAssertion(system.secret, identity(), { ...listing, method: "POST" }) })],
    ["an assertion signed for another service", () => ({ "x-portfolio-assertion": signAssertion(system.secret, identity(), { ...listing, audience: "provisioning" }) })],
    ["an assertion signed for a body", () => ({ "x-portfolio-assertion": signAssertion(system.secret, identity(), { ...listing, body: "{}" }) })],
    ["an expired assertion", () => ({ "x-portfolio-assertion": signAssertion(system.secret, identity(), listing, { nowMs: Date.now() - 120_000 }) })],
    ["garbage", () => ({ "x-portfolio-assertion": "garbage" })],
    ["a forged claim with a stolen signature", () => {
      const [header, genuineClaims, signature] = signAssertion(system.secret, identity(), listing).split(".")
      const claims = { ...JSON.parse(Buffer.from(genuineClaims!, "base64url").toString("utf8")), tenant: other.id, role: "tenant-admin", scope: "write" }
      return { "x-portfolio-assertion": `${header}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.${signature}` }
    }]
  ]

  it.each(refusals)("makes the referential service refuse %s with a 401 problem", async (_name, headers) => {
    const reply = await send(serviceApps(), { headers: headers() })
    expectProblem(reply, "UNAUTHENTICATED", apps)
  })

  it("makes the provisioning service refuse a call without an assertion", async () => {
    const reply = await send(`${system.system.serviceUrls.provisioning}/api/v1/tenant/invitations/members`)
    expectProblem(reply, "UNAUTHENTICATED", "/api/v1/tenant/invitations/members")
  })

  it("makes the referential admin API refuse calls without an operator assertion", async () => {
    const path = `/admin/tenants/${tenant.id}/applications/APP-1`
    const url = `${system.system.adminUrls.referential}${path}`
    expectProblem(await send(url, { method: "PUT", body: { name: "Hijacked" } }), "UNAUTHENTICATED", path)
    const tenantAssertion = signAssertion(system.secret, new CallerIdentity({ tenantId: tenant.id, subject: "s", role: "tenant-admin", scope: "write" }), {
      audience: "referential",
      method: "PUT",
      target: path,
      body: JSON.stringify({ name: "Hijacked" })
    })
    expectProblem(await send(url, { method: "PUT", body: { name: "Hijacked" }, headers: { "x-portfolio-assertion": tenantAssertion } }), "INSUFFICIENT_SCOPE", path)
    expect((await system.api(read.token).get("/referentiel/applications/APP-1")).body.name).toBe("One")
  })

  it("replaces an assertion a client sends to the gateway with its own", async () => {
    // Even a genuinely signed assertion for another tenant must not survive the gateway.
    const smuggled = signAssertion(system.secret, new CallerIdentity({ tenantId: other.id, subject: "x", role: "tenant-admin", scope: "write" }), {
      audience: "referential",
      method: "GET",
      target: apps
    })
    const reply = await system.api(read.token).get("/referentiel/applications", { headers: { "x-portfolio-assertion": smuggled } })
    expect({ status: reply.status, codes: reply.body.map((a: any) => a.code) }).toEqual({ status: 200, codes: ["APP-1"] })
  })
})

describe("problem details of the gateway", () => {
  it("keeps instance to the path without the query string", async () => {
    const reply = await system.api(read.token).get("/referentiel/applications?data_class=NOPE&x=1")
    expectProblem(reply, "INVALID_REQUEST", apps)
    expectRateLimitHeaders(reply)
  })

  it("documents a slug under /api/v1/errors/<slug> (docs/product-rules.md#errors)", async () => {
    const reply = await send(`${system.baseUrl}/errors/invalid-scope`)
    expect(reply.status).toBe(200)
    expect(reply.text).toContain("Insufficient scope")
  })
})
