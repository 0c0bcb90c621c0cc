import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startDiscoveryDocument } from "../support/discovery.js"
import type { Reply } from "../support/http.js"
import { acceptThroughPage, magicLinkFor, membersPath } from "../support/provisioning.js"
import type { CreatedPat, CreatedTenant } from "../support/system.js"
import { useSharedSystem } from "../support/useSystem.js"

/**
 * SCIM 2.0 against the running system, as the identity tools call it: the request sequences Okta
 * and Microsoft Entra ID send (docs/scim.md), each followed by what the public API then shows,
 * and the refusals of tokens of the wrong kind or tenant.
 */
const system = useSharedSystem()

const scimMedia = "application/scim+json"
const userUrn = "urn:ietf:params:scim:schemas:core:2.0:User"
const patchUrn = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
const errorUrn = "urn:ietf:params:scim:api:messages:2.0:Error"

let provider: Awaited<ReturnType<typeof startDiscoveryDocument>> | undefined

afterAll(() => provider?.close())

const scimToken = async (tenant: CreatedTenant, label: string): Promise<{ id: string; token: string }> =>
  system.adminOk("gateway", "POST", `/admin/tenants/${tenant.id}/scim-tokens`, { label })

/** A SCIM client as the identity tools are: `application/scim+json` both ways (Okta adds a charset). */
const scim = (token: string | undefined) => {
  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    system.api(token).call(method, `/scim/v2${path}`, {
      headers: { accept: scimMedia, ...(body === undefined ? {} : { "content-type": `${scimMedia}; charset=utf-8` }), ...headers },
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) })
    })
  return {
    get: (path: string, headers?: Record<string, string>) => call("GET", path, undefined, headers),
    post: (path: string, body: unknown) => call("POST", path, body),
    put: (path: string, body: unknown, headers?: Record<string, string>) => call("PUT", path, body, headers),
    patch: (path: string, body: unknown, headers?: Record<string, string>) => call("PATCH", path, body, headers),
    del: (path: string, headers?: Record<string, string>) => call("DELETE", path, undefined, headers)
  }
}

const expectScimError = (reply: Reply, status: number, scimType?: string) => {
  expect(reply.status, reply.text).toBe(status)
  expect(reply.contentType).toMatch(/^application\/scim\+json/)
  expect(reply.body.schemas).toEqual([errorUrn])
  expect(reply.body.status).toBe(String(status))
  expect(typeof reply.body.detail).toBe("string")
  if (scimType !== undefined) expect(reply.body.scimType).toBe(scimType)
  // Nothing of the platform's problem+json leaks into a SCIM answer.
  expect(reply.body.errorCode).toBeUndefined()
}

const expectUser = (reply: Reply, status = 200) => {
  expect(reply.status, reply.text).toBe(status)
  expect(reply.contentType).toMatch(/^application\/scim\+json/)
  expect(reply.body.schemas).toEqual([userUrn])
  expect(reply.headers.get("etag")).toBe(reply.body.meta.version)
  return reply.body
}

/**
 * The answer once it is a 401, asking every 100 ms for at most `withinMs`: a removal reaches the
 * gateway through member.removed, and a revocation outlives the token cache (1 s) at most.
 */
const refusedWithin = async (ask: () => Promise<Reply>, withinMs = 1000): Promise<Reply> => {
  const since = Date.now()
  let reply = await ask()
  while (reply.status !== 401 && Date.now() - since < withinMs) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    reply = await ask()
  }
  return reply
}

const userNameFilter = (userName: string) => `/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}&startIndex=1&count=100`

const membersOf = async (admin: CreatedPat): Promise<Array<any>> => {
  const reply = await system.api(admin.token).get(membersPath)
  expect(reply.status).toBe(200)
  return reply.body
}

let okta: CreatedTenant
let entra: CreatedTenant
let oktaAdmin: CreatedPat
let entraAdmin: CreatedPat
let oktaToken = ""
let entraToken = ""

beforeAll(async () => {
  provider = await startDiscoveryDocument()
  ;[okta, entra] = await Promise.all([system.createTenant("bb-scim-okta"), system.createTenant("bb-scim-entra")])
  ;[oktaAdmin, entraAdmin] = await Promise.all([system.createPat(okta, "write"), system.createPat(entra, "write")])
  oktaToken = (await scimToken(okta, "Okta")).token
  entraToken = (await scimToken(entra, "Entra ID")).token
  await system.adminOk("provisioning", "PUT", `/admin/tenants/${entra.slug}/sso`, {
    issuer: provider.issuer,
    clientId: "portfolio",
    clientSecret: "entra-client-secret-4b7e1d",
    domains: ["contoso.example"],
    defaultRole: "contributor",
    roleMap: [],
    required: false,
    breakGlass: []
  })
}, 120_000)

describe("Okta's sequence: look up, create, update, deactivate by PUT, reactivate", () => {
  const userName = "jane.doe@okta-customer.example"
  let id = ""

  it("finds nobody before creating, then creates an invited User, inactive until the invitation is accepted", async () => {
    const client = scim(oktaToken)
    const lookup = await client.get(userNameFilter(userName))
    expect(lookup.status, lookup.text).toBe(200)
    expect(lookup.contentType).toMatch(/^application\/scim\+json/)
    expect(lookup.body).toMatchObject({ schemas: ["urn:ietf:params:scim:api:messages:2.0:ListResponse"], totalResults: 0, startIndex: 1, Resources: [] })

    // Okta's body as it sends it, password and locale included: both ignored.
    const created = expectUser(await client.post("/Users", {
      schemas: [userUrn],
      userName,
      name: { givenName: "Jane", familyName: "Doe" },
      emails: [{ primary: true, value: userName, type: "work" }],
      displayName: "Jane Doe",
      locale: "en-US",
      externalId: "00u1okta5EXAMPLE",
      groups: [],
      password: "ignored-by-the-service-1!",
      active: true
    }), 201)
    id = created.id
    expect(created).toMatchObject({
      userName,
      externalId: "00u1okta5EXAMPLE",
      name: { givenName: "Jane", familyName: "Doe" },
      displayName: "Jane Doe",
      emails: [{ value: userName, primary: true }],
      active: false,
      roles: [{ value: "viewer", primary: true }],
      meta: { resourceType: "User" }
    })
    expect(JSON.stringify(created)).not.toContain("ignored-by-the-service")
    const location = created.meta.location as string
    expect(location.endsWith(`/api/v1/scim/v2/Users/${id}`)).toBe(true)

    const found = await client.get(userNameFilter(userName.toUpperCase()))
    expect(found.body.totalResults).toBe(1)
    expect(found.body.Resources[0].id).toBe(id)
    expect((await membersOf(oktaAdmin)).some((m) => m.userEmail === userName)).toBe(false)
  })

  it("makes the person an active member once they accept the mailed invitation", async () => {
    await acceptThroughPage(await magicLinkFor(system, userName))
    expect(expectUser(await scim(oktaToken).get(`/Users/${id}`)).active).toBe(true)
    expect((await membersOf(oktaAdmin)).find((m) => m.userEmail === userName)).toMatchObject({ arbRole: "viewer", source: "INVITATION" })
  })

  it("updates the profile and the role by PUT, and answers 409 uniqueness for the same userName again", async () => {
    const client = scim(oktaToken)
    const replaced = expectUser(await client.put(`/Users/${id}`, {
      schemas: [userUrn],
      id,
      userName,
      name: { givenName: "Janet", familyName: "Doe" },
      emails: [{ primary: true, value: userName, type: "work" }],
      roles: [{ value: "architect", primary: true }],
      active: true
    }))
    expect(replaced).toMatchObject({ name: { givenName: "Janet" }, roles: [{ value: "architect" }], active: true })
    expect((await membersOf(oktaAdmin)).find((m) => m.userEmail === userName)?.arbRole).toBe("architect")

    expectScimError(await client.post("/Users", { schemas: [userUrn], userName: userName.toUpperCase(), emails: [{ value: "other@okta-customer.example" }] }), 409, "uniqueness")
  })

  it("deactivates by PUT with active false: the member is removed and their token refused at once", async () => {
    const client = scim(oktaToken)
    const member = (await membersOf(oktaAdmin)).find((m) => m.userEmail === userName)
    const pat = await system.createPat(okta, "read", userName)
    expect((await system.api(pat.token).get("/referentiel/applications")).status).toBe(200)

    const current = expectUser(await client.get(`/Users/${id}`))
    const deactivated = expectUser(await client.put(`/Users/${id}`, { ...current, meta: undefined, active: false }))
    expect(deactivated.active).toBe(false)
    expect((await membersOf(oktaAdmin)).some((m) => m.userSub === member.userSub)).toBe(false)
    expect((await refusedWithin(() => system.api(pat.token).get("/referentiel/applications"))).status).toBe(401)
  })

  it("reactivates by PUT with active true: a new invitation, never a membership without one", async () => {
    const client = scim(oktaToken)
    const current = expectUser(await client.get(`/Users/${id}`))
    const before = await system.adminOk("provisioning", "GET", `/admin/mail?to=${encodeURIComponent(userName)}`)
    const reactivated = expectUser(await client.put(`/Users/${id}`, { ...current, meta: undefined, active: true }))
    expect(reactivated.active).toBe(false)
    const after = await system.adminOk("provisioning", "GET", `/admin/mail?to=${encodeURIComponent(userName)}`)
    expect(after.length).toBe(before.length + 1)
    await acceptThroughPage(await magicLinkFor(system, userName))
    expect(expectUser(await client.get(`/Users/${id}`)).active).toBe(true)
  })

  it("honours If-Match and If-None-Match with the User's ETag", async () => {
    const client = scim(oktaToken)
    const current = await client.get(`/Users/${id}`)
    const etag = current.headers.get("etag")!
    expect(etag).toMatch(/^W\/"\d+"$/)
    expect((await client.get(`/Users/${id}`, { "if-none-match": etag })).status).toBe(304)
    expectScimError(await client.patch(`/Users/${id}`, { schemas: [patchUrn], Operations: [{ op: "replace", path: "displayName", value: "J" }] }, { "if-match": `W/"999999"` }), 412)
    const patched = expectUser(await client.patch(`/Users/${id}`, { schemas: [patchUrn], Operations: [{ op: "replace", path: "displayName", value: "J. Doe" }] }, { "if-match": etag }))
    expect(patched.displayName).toBe("J. Doe")
    expect(patched.meta.version).not.toBe(etag)
  })
})

describe("Microsoft Entra ID's sequence: externalId lookup, create with single sign-on, capitalised PATCH, disable, delete", () => {
  const externalId = "0a21f0f2-8d2a-4f8e-9e2a-7f3c1d5e9b10"
  const userName = "Test_User_ab6490ee@contoso.example"
  let id = ""

  it("creates a member at once (SSO_JIT, the connection's default role) when the tenant has single sign-on for the domain", async () => {
    const client = scim(entraToken)
    const lookup = await client.get(`/Users?filter=${encodeURIComponent(`externalId eq "${externalId}"`)}`)
    expect(lookup.body.totalResults).toBe(0)
    // Entra ID's body as it sends it: the enterprise extension's URN and attributes are ignored.
    const created = expectUser(await client.post("/Users", {
      schemas: [userUrn, "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"],
      externalId,
      userName,
      active: true,
      emails: [{ primary: true, type: "work", value: userName }],
      meta: { resourceType: "User" },
      name: { formatted: "Test User", familyName: "User", givenName: "Test" },
      roles: [],
      "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": { department: "Architecture" }
    }), 201)
    id = created.id
    expect(created).toMatchObject({ externalId, userName, active: true, roles: [{ value: "contributor" }] })
    expect((await membersOf(entraAdmin)).find((m) => m.userEmail.toLowerCase() === userName.toLowerCase())).toMatchObject({ source: "SSO_JIT", arbRole: "contributor" })
    const byExternalId = await client.get(`/Users?filter=${encodeURIComponent(`externalId eq "${externalId}"`)}`)
    expect(byExternalId.body.Resources.map((u: any) => u.id)).toEqual([id])
    const byEmail = await client.get(`/Users?filter=${encodeURIComponent(`emails.value eq "${userName.toLowerCase()}"`)}`)
    expect(byEmail.body.Resources.map((u: any) => u.id)).toEqual([id])
  })

  it("applies Entra ID's PATCH: `Replace` capitalised, a map without path, the role, and active as the string \"False\"", async () => {
    const client = scim(entraToken)
    const renamed = expectUser(await client.patch(`/Users/${id}`, {
      schemas: [patchUrn],
      Operations: [
        { op: "Replace", path: "displayName", value: "Test User Renamed" },
        { op: "Replace", value: { "name.givenName": "Tess", "name.familyName": "Usher" } },
        { op: "Replace", path: "roles", value: [{ value: "portfolio-manager", primary: true }] },
        { op: "Add", path: "title", value: "Enterprise architect" }
      ]
    }))
    expect(renamed).toMatchObject({ displayName: "Test User Renamed", name: { givenName: "Tess", familyName: "Usher" }, roles: [{ value: "portfolio-manager" }], active: true })
    expect((await membersOf(entraAdmin)).find((m) => m.userEmail.toLowerCase() === userName.toLowerCase())?.arbRole).toBe("portfolio-manager")

    const disabled = expectUser(await client.patch(`/Users/${id}`, { schemas: [patchUrn], Operations: [{ op: "Replace", path: "active", value: "False" }] }))
    expect(disabled.active).toBe(false)
    expect((await membersOf(entraAdmin)).some((m) => m.userEmail.toLowerCase() === userName.toLowerCase())).toBe(false)
  })

  it("deletes the User: 204, then 404 as a SCIM error", async () => {
    const client = scim(entraToken)
    expect((await client.del(`/Users/${id}`)).status).toBe(204)
    expectScimError(await client.get(`/Users/${id}`), 404)
  })
})

describe("members who joined otherwise, and the discovery documents", () => {
  it("lists the tenant's existing members as Users, so that a lookup before creation finds them", async () => {
    const list = await scim(oktaToken).get(userNameFilter(okta.adminEmail))
    expect(list.body.totalResults).toBe(1)
    expect(list.body.Resources[0]).toMatchObject({ userName: okta.adminEmail, active: true, roles: [{ value: "tenant-admin" }] })
  })

  it("answers ServiceProviderConfig, ResourceTypes (User only) and Schemas", async () => {
    const client = scim(oktaToken)
    const config = await client.get("/ServiceProviderConfig")
    expect(config.status).toBe(200)
    expect(config.body).toMatchObject({ patch: { supported: true }, bulk: { supported: false }, filter: { supported: true, maxResults: 200 }, etag: { supported: true } })
    const types = await client.get("/ResourceTypes")
    expect(types.body.Resources.map((t: any) => t.id)).toEqual(["User"])
    const schemas = await client.get("/Schemas")
    expect(schemas.body.Resources.map((s: any) => s.id)).toContain(userUrn)
    expectScimError(await client.get("/Groups"), 404)
  })

  it("refuses a body that is not JSON (invalidSyntax) and a filter outside the grammar (invalidFilter)", async () => {
    const client = scim(oktaToken)
    expectScimError(await client.post("/Users", "{not json"), 400, "invalidSyntax")
    expectScimError(await client.get(`/Users?filter=${encodeURIComponent(`userName co "jane"`)}`), 400, "invalidFilter")
  })
})

describe("tokens of the wrong kind or tenant", () => {
  it("answers 401 as a SCIM error without a token, and with a malformed or unknown one", async () => {
    const none = await scim(undefined).get("/Users")
    expectScimError(none, 401)
    expect(none.headers.get("www-authenticate")).toMatch(/^Bearer/)
    expectScimError(await scim("ap_scim_not-a-token").get("/Users"), 401)
  })

  it("does not show a User of another tenant: the same 404 as an unknown id", async () => {
    const oktaUsers = await scim(oktaToken).get("/Users")
    const someone = oktaUsers.body.Resources[0].id
    const other = await scim(entraToken).get(`/Users/${someone}`)
    const unknown = await scim(entraToken).get("/Users/7d1a3c9e-0000-4000-8000-000000000000")
    expectScimError(other, 404)
    expect(other.body.detail).toBe(unknown.body.detail)
    expectScimError(await scim(entraToken).del(`/Users/${someone}`), 404)
    expect((await scim(oktaToken).get(`/Users/${someone}`)).status).toBe(200)
  })

  it("refuses a PAT on SCIM (403, a SCIM error) and a SCIM token anywhere else (403, problem+json)", async () => {
    expectScimError(await scim(oktaAdmin.token).get("/Users"), 403)
    const elsewhere = await system.api(oktaToken).get("/referentiel/applications")
    expect(elsewhere.status).toBe(403)
    expect(elsewhere.contentType).toMatch(/^application\/problem\+json/)
  })

  it("refuses a revoked token at once, and a third active token of a tenant", async () => {
    const extra = await scimToken(okta, "rotation")
    expect((await scim(extra.token).get("/Users")).status).toBe(200)
    const third = await system.admin("gateway", "POST", `/admin/tenants/${okta.id}/scim-tokens`, { body: { label: "one too many" } })
    expect(third.status).toBe(409)
    await system.adminOk("gateway", "POST", `/admin/tenants/${okta.id}/scim-tokens/${extra.id}/revoke`)
    expectScimError(await refusedWithin(() => scim(extra.token).get("/Users")), 401)
  })

  it("is made, listed and revoked by an operator with `portfolio scim`, the token printed once", async () => {
    const made = await system.cliJson(["scim", "token", "--tenant", entra.slug, "--label", "JumpCloud"])
    expect(made.token).toMatch(/^ap_scim_[0-9A-Za-z]{36}$/)
    expect((await scim(made.token).get("/ServiceProviderConfig")).status).toBe(200)
    const listed = await system.cliJson(["scim", "tokens", "--tenant", entra.slug])
    expect(listed.map((t: any) => t.label)).toContain("JumpCloud")
    expect(JSON.stringify(listed)).not.toContain(made.token)
    await system.cliJson(["scim", "revoke", "--tenant", entra.slug, made.id])
    expectScimError(await refusedWithin(() => scim(made.token).get("/Users")), 401)
  })
})
