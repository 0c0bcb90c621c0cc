import { HttpClient, HttpClientRequest, HttpClientResponse } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { verifyAssertion } from "@portfolio/platform"
import { Effect, Either } from "effect"
import { OperatorTenantId, operatorClient } from "../src/OperatorSigning.js"

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

describe("operator signing", () => {
  it.effect("signs each request for its method and full path as the operator, with the admin scope", () =>
    Effect.gen(function*() {
      const { client, sent } = recording()
      const signed = operatorClient({ baseUrl: "http://127.0.0.1:8085/base", secret, operator: "operator:alice" })(client)
      yield* signed.execute(HttpClientRequest.get("/admin/tenants/demo/members/admin@demo.example").pipe(HttpClientRequest.setUrlParam("x", "1")))
      yield* signed.execute(HttpClientRequest.post("/admin/pats"))

      const [get, post] = sent
      if (get === undefined || post === undefined) throw new Error("two requests expected")
      expect(get.url).toBe("http://127.0.0.1:8085/base/admin/tenants/demo/members/admin@demo.example")
      const identity = verifyAssertion(secret, get.headers["x-portfolio-assertion"], {
        method: "GET",
        path: "/base/admin/tenants/demo/members/admin@demo.example"
      })
      expect(Either.getOrThrow(identity)).toEqual({ tenantId: OperatorTenantId, subject: "operator:alice", role: "operator", scope: "admin" })
      expect(Either.isRight(verifyAssertion(secret, post.headers["x-portfolio-assertion"], { method: "POST", path: "/base/admin/pats" }))).toBe(true)
    }))

  it.effect("an assertion verifies for no other method, path or secret", () =>
    Effect.gen(function*() {
      const { client, sent } = recording()
      yield* operatorClient({ baseUrl: "http://127.0.0.1:8081", secret, operator: "operator:alice" })(client).execute(
        HttpClientRequest.post("/admin/pats")
      )
      const header = sent[0]?.headers["x-portfolio-assertion"]
      expect(verifyAssertion(secret, header, { method: "GET", path: "/admin/pats" })).toEqual(Either.left("bad-signature"))
      expect(verifyAssertion(secret, header, { method: "POST", path: "/admin/pats/revoke" })).toEqual(Either.left("bad-signature"))
      expect(verifyAssertion(`${secret}!`, header, { method: "POST", path: "/admin/pats" })).toEqual(Either.left("bad-signature"))
    }))
})
