import { HttpClient, HttpClientRequest, type HttpClientResponse } from "effect/http"
import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { CallerIdentity, ScimUserSchemaUrn } from "@portfolio/domain"
import { AssertionHeader, signedRequest } from "@portfolio/platform/security"
import { Effect } from "effect"
import { PublicHttpLive } from "../../src/adapters/http/Servers.js"
import { lastMailTo, tenantWithAdmin } from "../support/Fixtures.js"
import { PgAdaptersLayer } from "../support/PgLayers.js"
import { testSecret, testServer } from "../support/TestServer.js"

/** The public port as main.ts serves it, with the real adapters on a fresh database. */
const TestServer = testServer(PublicHttpLive, PgAdaptersLayer({ invitationsPerTenantPerHour: 2 }))

const Users = "/api/v1/scim/v2/Users"
/** The test settings' PUBLIC_BASE_URL, under which every location is absolute. */
const Public = "https://portfolio.example/api/v1/scim/v2"
const ScimType = "application/scim+json"
const tokenSubject = "scim:0f8c7a52-51b4-4b8e-9a0c-7b0d5c1e2f33"

const scimOf = (tenantId: string) => new CallerIdentity({ tenantId, subject: tokenSubject, role: "scim", scope: "write" })

/** Sends the request signed for `caller` (none: unsigned), once it is final, as the gateway signs what it forwards. */
const send = (caller: CallerIdentity | undefined, request: HttpClientRequest.HttpClientRequest) =>
  Effect.flatMap(HttpClient.HttpClient, (client) => client.execute(caller === undefined ? request : signedRequest(testSecret, caller)(request)))

const withBody = (body: string, contentType = ScimType) => HttpClientRequest.bodyText(body, contentType)

const scimOut = (response: HttpClientResponse.HttpClientResponse) =>
  Effect.map(response.json, (body) => ({ status: response.status, contentType: response.headers["content-type"], body: body as Record<string, unknown> }))

const expectScimError = (response: HttpClientResponse.HttpClientResponse, status: number, scimType?: string) =>
  Effect.map(scimOut(response), (out) => {
    expect(out).toMatchObject({
      status,
      contentType: ScimType,
      body: { schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"], status: String(status), ...(scimType === undefined ? {} : { scimType }) }
    })
    if (scimType === undefined) expect(out.body).not.toHaveProperty("scimType")
    return out.body
  })

const post = (caller: CallerIdentity | undefined, body: unknown, contentType = ScimType) =>
  send(caller, HttpClientRequest.post(Users).pipe(withBody(typeof body === "string" ? body : JSON.stringify(body), contentType)))

const jane = {
  Schemas: [ScimUserSchemaUrn],
  USERNAME: "jane@example.com",
  Name: { GivenName: "Jane", familyName: "Doe" },
  emails: [{ Value: "jane@example.com", type: "work", Primary: "True" }],
  roles: [{ value: "architect" }],
  title: "Architect",
  "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": { department: "IT" }
}

layer(TestServer, { timeout: 60_000, excludeTestServices: true })("provisioning's SCIM routes", (it) => {
  it.effect("POST /Users takes application/scim+json in any attribute case: 201, Location, ETag, the User as SCIM shows it", () =>
    Effect.gen(function*() {
      const { tenant } = yield* tenantWithAdmin("scim-post")
      const created = yield* post(scimOf(tenant.id), jane)
      const { body, contentType, status } = yield* scimOut(created)
      expect({ status, contentType }).toEqual({ status: 201, contentType: ScimType })
      const id = body["id"] as string
      expect(created.headers["location"]).toBe(`${Public}/Users/${id}`)
      expect(created.headers["etag"]).toBe('W/"1"')
      expect(body).toEqual({
        schemas: [ScimUserSchemaUrn],
        id,
        userName: "jane@example.com",
        name: { givenName: "Jane", familyName: "Doe" },
        emails: [{ value: "jane@example.com", type: "work", primary: true }],
        active: false,
        roles: [{ value: "architect", display: "architect", primary: true }],
        meta: { resourceType: "User", created: expect.any(String), lastModified: expect.any(String), location: `${Public}/Users/${id}`, version: 'W/"1"' }
      })
      expect(yield* lastMailTo("jane@example.com")).toContain("SCIM provisioning invited you to join the workspace scim-post as architect.")

      const read = yield* send(scimOf(tenant.id), HttpClientRequest.get(`${Users}/${id}`))
      expect(read.status).toBe(200)
      expect(read.headers["etag"]).toBe('W/"1"')
      expect(((yield* read.json) as { meta: { location: string } }).meta.location).toBe(`${Public}/Users/${id}`)
      const unchanged = yield* send(scimOf(tenant.id), HttpClientRequest.get(`${Users}/${id}`).pipe(HttpClientRequest.setHeader("if-none-match", 'W/"1"')))
      expect(unchanged.status).toBe(304)
      expect(unchanged.headers["etag"]).toBe('W/"1"')
      expect((yield* send(scimOf(tenant.id), HttpClientRequest.get(`${Users}/${id}`).pipe(HttpClientRequest.setHeader("if-none-match", 'W/"0"')))).status).toBe(200)

      const sql = yield* SqlClient.SqlClient
      const logged = yield* sql<{ action: string; actorSub: string; actorEmail: string }>`
        SELECT action, actor_sub, actor_email FROM provisioning.security_events WHERE tenant_id = ${tenant.id} ORDER BY action`
      expect(logged).toEqual([
        { action: "member_invited", actorSub: tokenSubject, actorEmail: "" },
        { action: "scim_user_created", actorSub: tokenSubject, actorEmail: "" }
      ])
    }))

  it.effect("a body that is not JSON or not a User is a 400 invalidSyntax, a PatchOp's too; another media type is a 415", () =>
    Effect.gen(function*() {
      const { tenant } = yield* tenantWithAdmin("scim-syntax")
      const scim = scimOf(tenant.id)
      yield* expectScimError(yield* post(scim, "{ not json"), 400, "invalidSyntax")
      yield* expectScimError(yield* post(scim, { emails: [{ value: "x@example.com" }] }), 400, "invalidSyntax")
      yield* expectScimError(yield* post(scim, JSON.stringify(jane), "text/plain"), 415)
      yield* expectScimError(yield* post(scim, `${"[".repeat(40)}${"]".repeat(40)}`), 400, "invalidSyntax")
      // Plain JSON is read too.
      expect((yield* post(scim, { userName: "plain@example.com" }, "application/json; charset=utf-8")).status).toBe(201)
      const patchBad = yield* send(scim, HttpClientRequest.patch(`${Users}/${crypto.randomUUID()}`).pipe(withBody('{"Operations": "nope"}')))
      yield* expectScimError(patchBad, 400, "invalidSyntax")
      const sql = yield* SqlClient.SqlClient
      // The tenant's admin, adopted as the first User was made, and that one.
      expect(yield* sql`SELECT user_name FROM provisioning.scim_users WHERE tenant_id = ${tenant.id} ORDER BY user_name`)
        .toEqual([{ userName: "admin@scim-syntax.test" }, { userName: "plain@example.com" }])
    }))

  it.effect("hostile input is a 400 or ignored, never a 500: __proto__ keys anywhere in a body, a control character in a filter", () =>
    Effect.gen(function*() {
      const { tenant } = yield* tenantWithAdmin("scim-hostile")
      const scim = scimOf(tenant.id)
      // Raw bodies: a JavaScript object literal would take "__proto__" as its prototype, not as a key.
      const named = yield* post(scim, '{"userName":"proto@example.com","active":false,"name":{"__proto__":{"givenName":"Mallory"}}}')
      const { body, status } = yield* scimOut(named)
      expect(status).toBe(201)
      expect(body).not.toHaveProperty("name")
      expect((yield* post(scim, '{"__proto__":{"userName":"x"},"userName":"proto2@example.com","active":false}')).status).toBe(201)
      expect((yield* post(scim, '{"userName":"proto3@example.com","active":false,"emails":[{"__proto__":{},"value":"proto3@example.com"}]}')).status).toBe(201)
      yield* expectScimError(yield* post(scim, '{"__proto__":{"userName":"proto4@example.com"}}'), 400, "invalidSyntax")

      const id = body["id"] as string
      const patch = (operations: string) =>
        send(scim, HttpClientRequest.patch(`${Users}/${id}`).pipe(withBody(`{"schemas":["urn:ietf:params:scim:api:messages:2.0:PatchOp"],"Operations":${operations}}`)))
      const patched = yield* patch('[{"op":"replace","path":"displayName","value":"P","__proto__":{"path":"active"}}]')
      expect(patched.status).toBe(200)
      expect(yield* patched.json).toMatchObject({ displayName: "P", active: false })
      yield* expectScimError(yield* patch('[{"__proto__":{"op":"add"}}]'), 400, "invalidSyntax")
      yield* expectScimError(yield* patch('[{"op":"replace","value":{"__proto__":{"active":true}}}]'), 400, "invalidPath")
      expect((yield* patch('[{"op":"replace","value":{"name":{"__proto__":{}}}}]')).status).toBe(200)
      yield* expectScimError(yield* send(scim, HttpClientRequest.patch(`${Users}/${id}`).pipe(withBody('{"__proto__":{"Operations":[]},"schemas":[]}'))), 400, "invalidSyntax")

      // An escaped NUL would reach PostgreSQL, whose text refuses it.
      for (const filter of ['userName eq "\\u0000"', 'externalId eq "a\\u0000b"', 'emails.value eq "\\u001b"']) {
        yield* expectScimError(yield* send(scim, HttpClientRequest.get(Users).pipe(HttpClientRequest.setUrlParam("filter", filter))), 400, "invalidFilter")
      }
    }))

  it.effect("only a SCIM token's assertion is answered: a tenant-admin's is a 403, none a 401, as SCIM errors", () =>
    Effect.gen(function*() {
      const { caller, tenant } = yield* tenantWithAdmin("scim-callers")
      const admin = yield* send(caller, HttpClientRequest.get(Users))
      const refused = yield* expectScimError(admin, 403)
      expect(refused["detail"]).toBe("The SCIM endpoints take a tenant's SCIM token, and no other credential.")
      yield* expectScimError(yield* send(caller, HttpClientRequest.get(`${"/api/v1/scim/v2"}/ServiceProviderConfig`)), 403)
      const anonymous = yield* send(undefined, HttpClientRequest.get(Users))
      yield* expectScimError(anonymous, 401)
      expect(anonymous.headers["www-authenticate"]).toBe("Bearer")
      // The assertion binds the body: another body under the same assertion is refused.
      const signed = signedRequest(testSecret, scimOf(tenant.id))(HttpClientRequest.post(Users).pipe(withBody(JSON.stringify(jane))))
      const tampered = HttpClientRequest.post(Users).pipe(
        withBody(JSON.stringify({ ...jane, roles: [{ value: "tenant-admin" }] })),
        HttpClientRequest.setHeader(AssertionHeader, signed.headers[AssertionHeader]!)
      )
      yield* expectScimError(yield* send(undefined, tampered), 401)
    }))

  it.effect("PATCH honours If-Match (412 for another version) and answers the new ETag; Entra ID's Replace of active as a string", () =>
    Effect.gen(function*() {
      const { tenant } = yield* tenantWithAdmin("scim-patch")
      const scim = scimOf(tenant.id)
      const id = ((yield* (yield* post(scim, { userName: "ann@example.com" })).json) as { id: string }).id
      const patch = (ifMatch: string, operations: unknown) =>
        send(scim, HttpClientRequest.patch(`${Users}/${id}`).pipe(
          HttpClientRequest.setHeader("if-match", ifMatch),
          withBody(JSON.stringify({ schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], Operations: operations }))
        ))
      const stale = yield* patch('W/"5"', [{ op: "Replace", path: "displayName", value: "Ann" }])
      expect((yield* expectScimError(stale, 412))["detail"]).toBe("If-Match names another version of this User: read it again.")
      const done = yield* patch('W/"1"', [{ op: "Replace", path: "displayName", value: "Ann" }])
      expect(done.status).toBe(200)
      expect(done.headers["etag"]).toBe('W/"2"')
      expect(yield* done.json).toMatchObject({ id, displayName: "Ann", meta: { version: 'W/"2"', location: `${Public}/Users/${id}` } })
      const deactivated = yield* patch('W/"2"', [{ op: "Replace", path: "active", value: "False" }])
      expect(yield* deactivated.json).toMatchObject({ active: false })
      const path = yield* patch("*", [{ op: "Replace", path: 'emails[type eq "home"].value', value: "a@b.c" }])
      yield* expectScimError(path, 400, "noTarget")
      const replaced = yield* send(scim, HttpClientRequest.put(`${Users}/${id}`).pipe(HttpClientRequest.setHeader("if-match", 'W/"1"'), withBody(JSON.stringify({ userName: "ann@example.com" }))))
      yield* expectScimError(replaced, 412)
    }))

  it.effect("lists with a filter, refuses another filter, deletes with 204, and then answers 404", () =>
    Effect.gen(function*() {
      const { tenant } = yield* tenantWithAdmin("scim-list", "boss@scim-list.test")
      const scim = scimOf(tenant.id)
      const listed = yield* send(scim, HttpClientRequest.get(Users).pipe(HttpClientRequest.setUrlParam("filter", 'userName eq "BOSS@scim-list.test"')))
      const list = (yield* scimOut(listed)).body
      expect(list).toMatchObject({
        schemas: ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
        totalResults: 1,
        startIndex: 1,
        itemsPerPage: 1,
        Resources: [{ userName: "boss@scim-list.test", active: true, roles: [{ value: "tenant-admin" }] }]
      })
      const boss = (list["Resources"] as ReadonlyArray<{ id: string; meta: { location: string } }>)[0]!
      expect(boss.meta.location).toBe(`${Public}/Users/${boss.id}`)
      const bad = yield* send(scim, HttpClientRequest.get(Users).pipe(HttpClientRequest.setUrlParam("filter", 'userName co "boss"')))
      yield* expectScimError(bad, 400, "invalidFilter")
      const counted = (yield* scimOut(yield* send(scim, HttpClientRequest.get(Users).pipe(HttpClientRequest.setUrlParam("count", "0"))))).body
      expect(counted).toMatchObject({ totalResults: 1, itemsPerPage: 0, Resources: [] })

      // The last tenant-admin stays: 409, without scimType.
      yield* expectScimError(yield* send(scim, HttpClientRequest.delete(`${Users}/${boss.id}`)), 409)
      const ann = ((yield* (yield* post(scim, { userName: "ann@example.com" })).json) as { id: string }).id
      const deleted = yield* send(scim, HttpClientRequest.delete(`${Users}/${ann}`))
      expect(deleted.status).toBe(204)
      expect(yield* deleted.text).toBe("")
      yield* expectScimError(yield* send(scim, HttpClientRequest.get(`${Users}/${ann}`)), 404)
      yield* expectScimError(yield* send(scim, HttpClientRequest.get(`${Users}/not-a-uuid`)), 404)
    }))

  it.effect("over the tenant's invitations per hour: 429 with Retry-After, as a SCIM error", () =>
    Effect.gen(function*() {
      const { tenant } = yield* tenantWithAdmin("scim-rate")
      const scim = scimOf(tenant.id)
      for (const name of ["one", "two"]) expect((yield* post(scim, { userName: `${name}@example.com` })).status).toBe(201)
      const limited = yield* post(scim, { userName: "three@example.com" })
      yield* expectScimError(limited, 429)
      expect(Number(limited.headers["retry-after"])).toBeGreaterThan(3500)
      expect(limited.headers["x-ratelimit-remaining"]).toBe("0")
    }))

  it.effect("discovery: the service provider's configuration, the User resource type and schema, and 404 for anything else", () =>
    Effect.gen(function*() {
      const { tenant } = yield* tenantWithAdmin("scim-discovery")
      const scim = scimOf(tenant.id)
      const get = (path: string) => Effect.flatMap(send(scim, HttpClientRequest.get(`/api/v1/scim/v2${path}`)), scimOut)
      expect(yield* get("/ServiceProviderConfig")).toMatchObject({
        status: 200,
        contentType: ScimType,
        body: {
          patch: { supported: true },
          bulk: { supported: false },
          filter: { supported: true, maxResults: 200 },
          changePassword: { supported: false },
          sort: { supported: false },
          etag: { supported: true },
          authenticationSchemes: [{ type: "oauthbearertoken" }],
          meta: { resourceType: "ServiceProviderConfig", location: `${Public}/ServiceProviderConfig` }
        }
      })
      expect(yield* get("/ResourceTypes")).toMatchObject({ body: { totalResults: 1, Resources: [{ id: "User", endpoint: "/Users", schema: ScimUserSchemaUrn, meta: { location: `${Public}/ResourceTypes/User` } }] } })
      expect(yield* get("/ResourceTypes/User")).toMatchObject({ status: 200, body: { id: "User", meta: { location: `${Public}/ResourceTypes/User` } } })
      expect((yield* get("/ResourceTypes/Group")).status).toBe(404)
      const schemas = (yield* get("/Schemas")).body as { Resources: ReadonlyArray<{ id: string; attributes: ReadonlyArray<{ name: string }> }> }
      expect(schemas.Resources.map((s) => s.id)).toEqual([ScimUserSchemaUrn])
      expect(schemas.Resources[0]!.attributes.map((a) => a.name)).toEqual(["userName", "externalId", "name", "displayName", "emails", "active", "roles"])
      expect(yield* get(`/Schemas/${ScimUserSchemaUrn}`)).toMatchObject({ status: 200, body: { id: ScimUserSchemaUrn, meta: { location: `${Public}/Schemas/${ScimUserSchemaUrn}` } } })
      expect((yield* get("/Schemas/urn:ietf:params:scim:schemas:core:2.0:Group")).status).toBe(404)
    }))
})
