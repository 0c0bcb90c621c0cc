import { FetchHttpClient, HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "effect/http"
import type { NetAddress } from "effect/net"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { expect, layer } from "@effect/vitest"
import { type ErrorCode, makeProblem } from "@portfolio/domain"
import { AssertionHeader, InternalSecret, verifyAssertion } from "@portfolio/platform/security"
import { Effect, Result, Layer } from "effect"
import { createServer } from "node:http"
import { ScimTokenDeskHttp } from "../../src/adapters/admin-apis/ScimTokenDeskHttp.js"
import { ConsoleSettings } from "../../src/Config.js"
import { ScimTokenDesk } from "../../src/ports/ScimTokenDesk.js"
import { testSettings } from "../support/Memory.js"

/**
 * ScimTokenDeskHttp against a stand-in of the gateway's admin API over real sockets: what it
 * sends (the member's tenant in every path, the call signed for the member) and what each answer
 * becomes for the page (the pages' tests run over the port in memory).
 */
const secret = "console-test-secret-0123456789abcdef"
const tenantId = "10000000-0000-4000-8000-000000000001"
const tokenId = "20000000-0000-4000-8000-000000000002"
const unknownId = "20000000-0000-4000-8000-000000000404"
const received: Array<{ readonly method: string; readonly url: string; readonly subject: string; readonly body: unknown }> = []

const listed = {
  id: tokenId,
  tenantId,
  label: "Okta production",
  tokenPrefix: "ap_scim_x7Q",
  createdBy: "console:alice@acme.test",
  createdAt: "2026-07-01T09:00:00.000Z",
  lastUsedAt: "2026-07-01T09:30:00.000Z",
  revokedAt: null
}

const problem = (errorCode: ErrorCode, status: number, detail: string) =>
  HttpServerResponse.jsonUnsafe(makeProblem({ errorCode, detail, instance: "/admin", errorsUrl: "https://errors.test" }), {
    status,
    contentType: "application/problem+json"
  })

/** Each call as the gateway received it, the assertion checked with the secret both hold. */
const record = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const text = yield* Effect.orDie(request.text)
  const opened = verifyAssertion(secret, request.headers[AssertionHeader], { audience: "gateway", method: request.method, target: request.url, body: text })
  const subject = Result.match(opened, { onFailure: (failure) => `refused: ${failure}`, onSuccess: ({ identity }) => identity.subject })
  const body = text === "" ? null : JSON.parse(text) as { readonly label?: string }
  received.push({ method: request.method, url: request.url, subject, body })
  return body
})

/** The label decides what creation answers: the tenant full, the gateway failing, or the token made. */
const Gateway = HttpRouter.addAll([
  HttpRouter.route("GET", "/admin/tenants/:tenantId/scim-tokens", Effect.as(record, HttpServerResponse.jsonUnsafe([listed]))),
  HttpRouter.route("POST", "/admin/tenants/:tenantId/scim-tokens", Effect.map(record, (body) =>
    body?.label === "Full"
      ? problem("CONFLICT", 409, "This tenant has 2 active SCIM tokens already.")
      : body?.label === "Broken"
      ? problem("INTERNAL", 500, "boom")
      : HttpServerResponse.jsonUnsafe({ ...listed, label: body?.label, lastUsedAt: null, token: "ap_scim_x7Qabcdefghijklmnopqrstuvwxyz0123456" }, { status: 201 }))),
  HttpRouter.route("POST", "/admin/tenants/:tenantId/scim-tokens/:id/revoke", Effect.flatMap(record, () =>
    Effect.map(HttpRouter.params, (params) =>
      params["id"] === tokenId
        ? HttpServerResponse.jsonUnsafe({ ...listed, revokedAt: "2026-07-01T10:00:00.000Z" })
        : problem("NOT_FOUND", 404, `This tenant has no SCIM token with the id ${params["id"]}.`))))
])

const GatewayServer = HttpRouter.serve(Gateway, { disableLogger: true, disableListenLog: true }).pipe(
  Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0 }))
)

const Adapter = Layer.unwrap(
  Effect.map(HttpServer.HttpServer, (server) =>
    ScimTokenDeskHttp.pipe(
      Layer.provide(Layer.succeed(ConsoleSettings, testSettings({ gatewayAdminUrl: `http://127.0.0.1:${(server.address as NetAddress.InetAddress).port}` }))),
      Layer.provide(FetchHttpClient.layer),
      Layer.provide(InternalSecret.fixed(secret))
    ))
).pipe(Layer.provideMerge(GatewayServer))

const actor = { tenantId, userSub: "sub-alice", email: "alice@acme.test", role: "tenant-admin" as const }
const member = "console:alice@acme.test"
const base = `/admin/tenants/${tenantId}/scim-tokens`

layer(Adapter, { timeout: 30_000, excludeTestServices: true })("ScimTokenDeskHttp, the tenant's SCIM tokens on the gateway's admin API", (it) => {
  it.effect("lists and makes the member's tenant's tokens, signed for the member; the token comes back once, in the creation's answer", () =>
    Effect.gen(function*() {
      const desk = yield* ScimTokenDesk
      received.length = 0
      const tokens = yield* desk.list(actor)
      expect(tokens.map((t) => [t.id, t.label, t.tokenPrefix, t.createdBy, t.revokedAt])).toEqual([[tokenId, "Okta production", "ap_scim_x7Q", member, null]])
      const created = yield* desk.create(actor, "Entra ID")
      expect(created).toMatchObject({ label: "Entra ID", token: "ap_scim_x7Qabcdefghijklmnopqrstuvwxyz0123456" })
      expect(received).toEqual([
        { method: "GET", url: base, subject: member, body: null },
        { method: "POST", url: base, subject: member, body: { label: "Entra ID" } }
      ])
    }))

  it.effect("a third token's 409 and an unknown token's 404 are the member's to read, in the gateway's words; a 500 is an outage", () =>
    Effect.gen(function*() {
      const desk = yield* ScimTokenDesk
      expect(yield* Effect.flip(desk.create(actor, "Full"))).toMatchObject({ _tag: "Refused", status: 409, detail: "This tenant has 2 active SCIM tokens already." })
      expect(yield* Effect.flip(desk.revoke(actor, unknownId))).toMatchObject({
        _tag: "Refused",
        status: 404,
        detail: `This tenant has no SCIM token with the id ${unknownId}.`
      })
      expect((yield* Effect.flip(desk.create(actor, "Broken")))._tag).toBe("UpstreamUnavailable")
    }))

  it.effect("revokes under the member's tenant", () =>
    Effect.gen(function*() {
      const desk = yield* ScimTokenDesk
      received.length = 0
      const revoked = yield* desk.revoke(actor, tokenId)
      expect(revoked.revokedAt).not.toBeNull()
      expect(received).toEqual([{ method: "POST", url: `${base}/${tokenId}/revoke`, subject: member, body: null }])
    }))
})

layer(
  ScimTokenDeskHttp.pipe(
    Layer.provide(Layer.succeed(ConsoleSettings, testSettings({ gatewayAdminUrl: "http://127.0.0.1:9" }))),
    Layer.provide(FetchHttpClient.layer),
    Layer.provide(InternalSecret.fixed(secret))
  ),
  { timeout: 30_000, excludeTestServices: true }
)("ScimTokenDeskHttp, the gateway away", (it) => {
  it.effect("answers UpstreamUnavailable from every method", () =>
    Effect.gen(function*() {
      const desk = yield* ScimTokenDesk
      for (const call of [desk.list(actor), desk.create(actor, "Okta"), desk.revoke(actor, tokenId)]) {
        expect((yield* Effect.flip(call as Effect.Effect<unknown, { readonly _tag: string }>))._tag).toBe("UpstreamUnavailable")
      }
    }))
})
