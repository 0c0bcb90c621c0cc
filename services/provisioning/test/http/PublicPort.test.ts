import { HttpClient, HttpClientRequest, type HttpClientResponse } from "effect/http"
import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { CallerIdentity } from "@portfolio/domain"
import { signedRequest } from "@portfolio/platform/security"
import { DateTime, Effect } from "effect"
import * as fc from "fast-check"
import { PublicHttpLive } from "../../src/adapters/http/Servers.js"
import { lastMailTo, tenantWithAdmin, tokenOf } from "../support/Fixtures.js"
import { PgAdaptersLayer } from "../support/PgLayers.js"
import { testSecret, testServer } from "../support/TestServer.js"

/** The public port as main.ts serves it, with the real adapters on a fresh database. */
const TestServer = testServer(PublicHttpLive, PgAdaptersLayer({ invitationsPerTenantPerHour: 3 }))

// The assertion names the body, which call sites set after choosing the caller: `send` signs
// once the request is final, for the caller `asCaller` chose.
const callers = new Map<string, CallerIdentity>()
const asCaller = (caller: CallerIdentity, _method: string, _path: string) => {
  const mark = String(callers.size)
  callers.set(mark, caller)
  return HttpClientRequest.setHeader("x-test-caller", mark)
}

const send = (request: HttpClientRequest.HttpClientRequest) => {
  const caller = callers.get(request.headers["x-test-caller"] ?? "")
  const final = caller === undefined ? request : signedRequest(testSecret, caller)(request)
  return Effect.flatMap(HttpClient.HttpClient, (client) => client.execute(final))
}

const body = (response: HttpClientResponse.HttpClientResponse) => response.text

const invite = (caller: CallerIdentity, email: string, arbRole = "architect") =>
  send(
    HttpClientRequest.post("/api/v1/tenant/invitations").pipe(
      asCaller(caller, "POST", "/api/v1/tenant/invitations"),
      HttpClientRequest.bodyJsonUnsafe({ email, arbRole })
    )
  )

const postForm = (path: string, fields: Record<string, string>) =>
  send(HttpClientRequest.post(path).pipe(HttpClientRequest.bodyUrlParams(fields)))

layer(TestServer, { timeout: 60_000, excludeTestServices: true })("provisioning public port", (it) => {
  it.effect("the acceptance page: a valid link sets the password and creates the INVITATION member; a reused link reveals nothing", () =>
    Effect.gen(function*() {
      const { caller } = yield* tenantWithAdmin("pagetest", "boss@pagetest.test")
      const created = yield* invite(caller, "Invitee@Example.com", "contributor")
      expect(created.status).toBe(201)
      const text = yield* lastMailTo("Invitee@Example.com")
      const token = tokenOf(text)
      expect(text).toContain(`https://portfolio.example/accept/${token}`)
      const path = `/accept/${token}`

      const form = yield* send(HttpClientRequest.get(path))
      expect(form.status).toBe(200)
      expect(form.headers["content-type"]).toContain("text/html")
      expect(form.headers["cache-control"]).toBe("no-store")
      expect(form.headers["referrer-policy"]).toBe("no-referrer")
      const formHtml = yield* body(form)
      expect(formHtml).toContain("Invitee@Example.com")
      expect(formHtml).toContain("<strong>pagetest</strong>")
      expect(formHtml).toContain('<form method="post">')
      expect(formHtml).not.toContain("<script")

      const mismatch = yield* postForm(path, { password: "first password 1", confirm: "other password 2" })
      expect(mismatch.status).toBe(400)
      expect(yield* body(mismatch)).toContain("The two passwords differ.")
      const short = yield* postForm(path, { password: "short", confirm: "short" })
      expect(short.status).toBe(400)
      expect(yield* body(short)).toContain("The password is too short: it has 5 characters and needs at least 12.")

      const done = yield* postForm(path, { password: "a fine long password", confirm: "a fine long password" })
      expect(done.status).toBe(200)
      expect(yield* body(done)).toContain("Your password is set and you are now a member of <strong>pagetest</strong>.")

      const members = yield* send(
        HttpClientRequest.get("/api/v1/tenant/invitations/members").pipe(asCaller(caller, "GET", "/api/v1/tenant/invitations/members"))
      )
      const listed = (yield* members.json) as ReadonlyArray<{ userEmail: string; source: string; arbRole: string }>
      expect(listed.map((m) => [m.userEmail, m.source, m.arbRole])).toEqual([
        ["Invitee@Example.com", "INVITATION", "contributor"],
        ["boss@pagetest.test", "SIGNUP", "tenant-admin"]
      ])

      const unknown = yield* body(yield* send(HttpClientRequest.get(`/accept/${"x".repeat(43)}`)))
      for (const reuse of [send(HttpClientRequest.get(path)), postForm(path, { password: "a fine long password", confirm: "a fine long password" })]) {
        const response = yield* reuse
        expect(response.status).toBe(404)
        const html = yield* body(response)
        expect(html).toBe(unknown)
        expect(html).toContain("This invitation link is not valid.")
        expect(html.toLowerCase()).not.toContain("invitee")
        expect(html).not.toContain("pagetest")
        expect(html).not.toContain("@")
      }
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT count(*)::int AS n FROM provisioning.accounts WHERE lower(email) = 'invitee@example.com' AND password_hash IS NOT NULL`).toEqual([{ n: 1 }])
    }))

  it.effect("the welcome link's page lets the first tenant-admin set a password, and keeps them the one SIGNUP member", () =>
    Effect.gen(function*() {
      const { admin, caller } = yield* tenantWithAdmin("welcomepage", "Chief@WelcomePage.test")
      const path = `/accept/${tokenOf(yield* lastMailTo("chief@welcomepage.test"))}`
      const form = yield* send(HttpClientRequest.get(path))
      expect(form.status).toBe(200)
      const formHtml = yield* body(form)
      expect(formHtml).toContain("<title>Set your password</title>")
      expect(formHtml).toContain("Choose the password of <strong>Chief@WelcomePage.test</strong>, a member of <strong>welcomepage</strong>.")
      expect(formHtml).not.toContain("You are invited")
      expect(formHtml).toContain('<button type="submit">Set password</button>')

      const done = yield* postForm(path, { password: "a fine long password", confirm: "a fine long password" })
      expect(done.status).toBe(200)
      expect(yield* body(done)).toContain("Your password is set; you are a member of <strong>welcomepage</strong>.")
      const members = yield* send(
        HttpClientRequest.get("/api/v1/tenant/invitations/members").pipe(asCaller(caller, "GET", "/api/v1/tenant/invitations/members"))
      )
      expect((yield* members.json) as unknown).toEqual([
        { userSub: admin.userSub, userEmail: "Chief@WelcomePage.test", arbRole: "tenant-admin", source: "SIGNUP", grantedAt: DateTime.formatIso(admin.grantedAt) }
      ])
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT count(*)::int AS n FROM provisioning.accounts WHERE subject = ${admin.userSub} AND password_hash IS NOT NULL`).toEqual([{ n: 1 }])
      expect((yield* send(HttpClientRequest.get(path))).status).toBe(404)
    }))

  it.effect("random bad bodies on POST /tenant/invitations get a 4xx problem+json, never a 5xx, and create nothing", () =>
    Effect.gen(function*() {
      const { caller, tenant } = yield* tenantWithAdmin("fuzz")
      const path = "/api/v1/tenant/invitations"
      const bodies = [
        ...fc.sample(fc.jsonValue(), 60).map((value) => JSON.stringify(value)),
        ...fc.sample(fc.record({ email: fc.oneof(fc.string(), fc.integer(), fc.constant(null)), arbRole: fc.oneof(fc.string(), fc.constant("viewer")) }), 60)
          .map((value) => JSON.stringify(value)),
        ...fc.sample(fc.string(), 30),
        "{",
        ""
      ]
      for (const raw of bodies) {
        const response = yield* send(
          HttpClientRequest.post(path).pipe(asCaller(caller, "POST", path), HttpClientRequest.bodyText(raw, "application/json"))
        )
        if (response.status < 400 || response.status >= 500) expect.fail(`body ${raw} answered ${response.status}`)
        expect(response.headers["content-type"]).toContain("application/problem+json")
        const problem = (yield* response.json) as { errorCode: string; status: number }
        expect(["INVALID_REQUEST", "INVALID_INVITATION_PARAM"]).toContain(problem.errorCode)
        expect(problem.status).toBe(response.status)
      }
      const sql = yield* SqlClient.SqlClient
      // Nothing beside the admin's welcome link, made with the tenant.
      expect(yield* sql`SELECT kind, count(*)::int AS n FROM provisioning.invitations WHERE tenant_id = ${tenant.id} GROUP BY kind`)
        .toEqual([{ kind: "welcome", n: 1 }])
    }))

  it.effect("a malformed token gets the same page as an unknown one", () =>
    Effect.gen(function*() {
      const response = yield* send(HttpClientRequest.get("/accept/not-a-token"))
      expect(response.status).toBe(404)
      expect(yield* body(response)).toContain("This invitation link is not valid.")
    }))

  it.effect("the invitations API answers problem+json: no assertion 401, architect 403, bad e-mail 400, duplicate 409, beyond the rate 429 with Retry-After", () =>
    Effect.gen(function*() {
      const { admin, caller, tenant } = yield* tenantWithAdmin("apitest")
      const anonymous = yield* send(HttpClientRequest.get("/api/v1/tenant/invitations"))
      expect(anonymous.status).toBe(401)
      expect(anonymous.headers["content-type"]).toContain("application/problem+json")
      expect(yield* anonymous.json).toEqual({
        type: "https://errors.test/api/unauthenticated",
        title: "Unauthenticated",
        status: 401,
        detail: "This service answers only requests forwarded by the gateway.",
        instance: "/api/v1/tenant/invitations",
        errorCode: "UNAUTHENTICATED"
      })
      const architect = new CallerIdentity({ tenantId: tenant.id, subject: admin.userSub, role: "architect", scope: "write" })
      const forbidden = yield* send(HttpClientRequest.get("/api/v1/tenant/invitations").pipe(asCaller(architect, "GET", "/api/v1/tenant/invitations")))
      expect(forbidden.status).toBe(403)
      expect(yield* forbidden.json).toMatchObject({
        title: "Insufficient scope",
        errorCode: "INSUFFICIENT_SCOPE",
        detail: "role 'architect' does not allow GET /tenant/invitations, which requires the tenant-admin role"
      })
      const bad = yield* invite(caller, "nope")
      expect(bad.status).toBe(400)
      expect(yield* bad.json).toMatchObject({ errorCode: "INVALID_INVITATION_PARAM", detail: "email: not a valid e-mail address." })
      // A NUL character is one more malformed value, not a malformed request (docs/product-rules.md#invitations-and-members).
      for (const [email, role] of [["nul\u0000@example.com", "viewer"], ["\u0000", "viewer"], ["nul@example.com", "viewer\u0000"]] as const) {
        const nul = yield* invite(caller, email, role)
        expect(nul.status).toBe(400)
        expect(yield* nul.json).toMatchObject({ errorCode: "INVALID_INVITATION_PARAM" })
      }
      expect((yield* invite(caller, "one@example.com")).status).toBe(201)
      const duplicate = yield* invite(caller, "ONE@example.com")
      expect(duplicate.status).toBe(409)
      expect(yield* duplicate.json).toMatchObject({ title: "Conflict", errorCode: "ALREADY_INVITED" })
      expect((yield* invite(caller, "two@example.com")).status).toBe(201)
      expect((yield* invite(caller, "three@example.com")).status).toBe(201)
      const limited = yield* invite(caller, "four@example.com")
      expect(limited.status).toBe(429)
      expect(yield* limited.json).toMatchObject({ errorCode: "RATE_LIMITED", status: 429 })
      const retryAfter = Number(limited.headers["retry-after"])
      const reset = Number(limited.headers["x-ratelimit-reset"])
      expect(retryAfter).toBeGreaterThanOrEqual(3590)
      expect(retryAfter).toBeLessThanOrEqual(3600)
      expect(Math.abs(reset - Math.ceil(Date.now() / 1000) - retryAfter)).toBeLessThanOrEqual(2)
      expect({ limit: limited.headers["x-ratelimit-limit"], remaining: limited.headers["x-ratelimit-remaining"] }).toEqual({ limit: "3", remaining: "0" })

      const listed = yield* send(HttpClientRequest.get("/api/v1/tenant/invitations").pipe(asCaller(caller, "GET", "/api/v1/tenant/invitations")))
      const invitations = (yield* listed.json) as ReadonlyArray<{ id: string; email: string; status: string }>
      // The admin's welcome link is listed, oldest, and took none of the 3 of the hour.
      expect(invitations.map((i) => i.email)).toEqual(["three@example.com", "two@example.com", "one@example.com", "admin@apitest.test"])
      const id = invitations[2]!.id
      const revokePath = `/api/v1/tenant/invitations/${id}`
      const revoked = yield* send(HttpClientRequest.delete(revokePath).pipe(asCaller(caller, "DELETE", revokePath)))
      expect(revoked.status).toBe(204)
      expect(yield* body(revoked)).toBe("")
      const again = yield* send(HttpClientRequest.delete(revokePath).pipe(asCaller(caller, "DELETE", revokePath)))
      expect(again.status).toBe(409)
      expect(yield* again.json).toMatchObject({ errorCode: "INVITATION_NOT_PENDING" })
      // An id that is not a UUID is an unknown id: the same 404 body, never a 400 or a database error.
      const unknownPath = "/api/v1/tenant/invitations/7d1f7c9e-2f55-4a0a-9a0e-5d1d6e0f0a11"
      const unknownId = yield* send(HttpClientRequest.delete(unknownPath).pipe(asCaller(caller, "DELETE", unknownPath)))
      expect(unknownId.status).toBe(404)
      const unknownBody = (yield* unknownId.json) as Record<string, unknown>
      for (const malformed of ["not-a-uuid", "123", "%00", `${id}x`]) {
        const path = `/api/v1/tenant/invitations/${malformed}`
        const reply = yield* send(HttpClientRequest.delete(path).pipe(asCaller(caller, "DELETE", path)))
        expect({ status: reply.status, body: yield* reply.json }).toEqual({ status: 404, body: { ...unknownBody, instance: path } })
      }
      const removePath = "/api/v1/tenant/invitations/members/nobody"
      const missing = yield* send(HttpClientRequest.delete(removePath).pipe(asCaller(caller, "DELETE", removePath)))
      expect(missing.status).toBe(404)
      expect(yield* missing.json).toEqual({
        type: "https://errors.test/api/not-found",
        title: "Not found",
        status: 404,
        detail: "No member with this userSub in the tenant.",
        instance: removePath,
        errorCode: "NOT_FOUND"
      })
    }))
})
