import { HttpClient, HttpClientRequest, HttpClientResponse } from "effect/http"
import { describe, expect, it } from "@effect/vitest"
import { ActorRequest, ProvisioningAdminApi } from "@portfolio/domain"
import { type AssertedRequest, verifyAssertion } from "@portfolio/platform/security"
import { Effect, Result } from "effect"
import { OperatorTenantId, operatorApiClient, operatorClient } from "../../src/security/OperatorClient.js"

const secret = "a-secret-for-signing-tests-of-32-chars-or-more"

/** A client that records the requests it would send and answers 204. */
const recording = () => {
  const sent: Array<HttpClientRequest.HttpClientRequest> = []
  const client = HttpClient.make((request) =>
    Effect.sync(() => {
      sent.push(request)
      return HttpClientResponse.fromWeb(request, new Response(null, { status: 204 }))
    })
  )
  return { client, sent }
}

const assertionOf = (request: HttpClientRequest.HttpClientRequest | undefined) => request?.headers["x-portfolio-assertion"]
// Signed by the test's clock, which stands still: verified at the same instant.
const identityFor = (request: HttpClientRequest.HttpClientRequest | undefined, as: AssertedRequest) =>
  Result.map(verifyAssertion(secret, assertionOf(request), as, 0), (opened) => opened.identity)

describe("operator signing", () => {
  it.effect("signs each request for its service, method, final target and body, as the operator, with the admin scope", () =>
    Effect.gen(function*() {
      const { client, sent } = recording()
      const signed = operatorClient({ baseUrl: "http://127.0.0.1:8085/base", secret, operator: "operator:alice" })(client)
      yield* signed.execute(HttpClientRequest.get("/admin/tenants/demo/members/admin@demo.example").pipe(HttpClientRequest.setUrlParam("x", "a b")))
      yield* signed.execute(HttpClientRequest.post("/admin/pats").pipe(HttpClientRequest.bodyJsonUnsafe({ tokenOrId: "é" })))

      const [get, post] = sent
      expect(get?.url).toBe("http://127.0.0.1:8085/base/admin/tenants/demo/members/admin@demo.example")
      const identity = identityFor(get, { audience: "provisioning", method: "GET", target: "/base/admin/tenants/demo/members/admin@demo.example?x=a+b" })
      expect(Result.getOrThrow(identity)).toEqual({ tenantId: OperatorTenantId, subject: "operator:alice", role: "operator", scope: "admin" })
      const body = JSON.stringify({ tokenOrId: "é" })
      expect(Result.isSuccess(identityFor(post, { audience: "gateway", method: "POST", target: "/base/admin/pats", body }))).toBe(true)
    }))

  it.effect("an assertion verifies for no other service, method, target, body or secret", () =>
    Effect.gen(function*() {
      const { client, sent } = recording()
      const body = { tokenOrId: "ap_pat_x" }
      yield* operatorClient({ baseUrl: "http://127.0.0.1:8081", secret, operator: "operator:alice" })(client).execute(
        HttpClientRequest.post("/admin/pats/revoke").pipe(HttpClientRequest.bodyJsonUnsafe(body))
      )
      const sentRequest = sent[0]
      const exact: AssertedRequest = { audience: "gateway", method: "POST", target: "/admin/pats/revoke", body: JSON.stringify(body) }
      expect(Result.isSuccess(identityFor(sentRequest, exact))).toBe(true)
      expect(identityFor(sentRequest, { ...exact, audience: "provisioning" })).toEqual(Result.fail("wrong-audience"))
      expect(identityFor(sentRequest, { ...exact, method: "PUT" })).toEqual(Result.fail("wrong-target"))
      expect(identityFor(sentRequest, { ...exact, target: "/admin/pats;/../pats/revoke" })).toEqual(Result.fail("wrong-target"))
      expect(identityFor(sentRequest, { ...exact, body: JSON.stringify({ tokenOrId: "ap_pat_y" }) })).toEqual(Result.fail("wrong-body"))
      expect(Result.map(verifyAssertion(`${secret}!`, assertionOf(sentRequest), exact, 0), () => "")).toEqual(Result.fail("bad-signature"))
    }))

  it.effect("refuses to sign a call no admin API declares", () =>
    Effect.gen(function*() {
      const { client } = recording()
      const exit = yield* Effect.exit(operatorClient({ baseUrl: "http://127.0.0.1:8081", secret, operator: "operator:alice" })(client).execute(
        HttpClientRequest.get("/admin/unknown")
      ))
      expect(exit._tag).toBe("Failure")
    }))

  it.effect("typed clients percent-encode each path parameter once, sign the encoded target, and send no '', '.' or '..'", () =>
    Effect.gen(function*() {
      const { client, sent } = recording()
      const clients = yield* operatorApiClient(ProvisioningAdminApi)({ baseUrl: "http://127.0.0.1:8085", secret, operator: "console:alice@acme.test" }).pipe(
        Effect.provideService(HttpClient.HttpClient, client)
      )
      const tenantId = "10000000-0000-4000-8000-000000000001"
      const remove = (userSub: string) => clients.provisioningAdmin.removeMemberAs({ params: { tenantId, userSub }, payload: new ActorRequest({ actorSub: "sub-alice" }) })
      yield* remove("sub?x=1#y %25\t.")
      const target = `/admin/console/tenants/${tenantId}/members/sub%3Fx%3D1%23y%20%2525%09./remove`
      expect(sent.map((request) => request.url)).toEqual([`http://127.0.0.1:8085${target}`])
      const signedFor = identityFor(sent[0], { audience: "provisioning", method: "POST", target, body: JSON.stringify({ actorSub: "sub-alice" }) })
      expect(Result.isSuccess(signedFor)).toBe(true)
      for (const userSub of ["", ".", ".."]) expect((yield* Effect.exit(remove(userSub)))._tag, JSON.stringify(userSub)).toBe("Failure")
      expect(sent).toHaveLength(1)
    }))
})
