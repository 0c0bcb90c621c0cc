import { FetchHttpClient, HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "effect/http"
import type { NetAddress } from "effect/net"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { expect, layer } from "@effect/vitest"
import { type ErrorCode, makeProblem, SsoConnectionRequest } from "@portfolio/domain"
import { InternalSecret } from "@portfolio/platform/security"
import { Effect, Layer, Option, Redacted } from "effect"
import { createServer } from "node:http"
import { SsoDeskHttp } from "../../src/adapters/admin-apis/SsoDeskHttp.js"
import { ConsoleSettings } from "../../src/Config.js"
import { SsoDesk } from "../../src/ports/SsoDesk.js"
import { testSettings } from "../support/Memory.js"

/**
 * SsoDeskHttp against a stand-in of provisioning's console doors over real sockets: what it sends
 * (the member, the secret in clear for provisioning alone) and what each answer becomes for the
 * page (the pages' tests run over the port in memory).
 */
const received: Array<{ readonly method: string; readonly url: string; readonly body: unknown }> = []
const tenantId = "10000000-0000-4000-8000-000000000001"
const secret = "the-client-secret-of-acme"

const problem = (errorCode: ErrorCode, status: number, detail: string) =>
  HttpServerResponse.jsonUnsafe(makeProblem({ errorCode, detail, instance: "/admin", errorsUrl: "https://errors.test" }), {
    status,
    contentType: "application/problem+json"
  })

const connection = {
  tenantId,
  issuer: "https://login.acme.test",
  clientId: "portfolio-console",
  redirectUri: "https://portfolio.example/console/sso/acme/callback",
  domains: ["acme.test"],
  defaultRole: "viewer",
  roleClaim: null,
  roleMap: [],
  required: false,
  breakGlass: [],
  domainsConfirmed: false,
  emailVerifiedClaim: "email_verified",
  secretSetAt: "2026-07-01T09:00:00.000Z",
  updatedAt: "2026-07-01T09:00:00.000Z"
}

const record = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const text = yield* Effect.orDie(request.text)
  const body = text === "" ? null : JSON.parse(text) as { readonly actorSub: string; readonly issuer?: string }
  received.push({ method: request.method, url: request.url, body })
  return { actorSub: body?.actorSub ?? new URL(request.url, "http://x").searchParams.get("actorSub"), issuer: body?.issuer }
})

/** The actor decides the answer: a member with no connection, a viewer, an outage, or a tenant-admin. */
const byActor = (actorSub: string | null, ok: () => HttpServerResponse.HttpServerResponse) => {
  switch (actorSub) {
    case "sub-none":
      return problem("NOT_FOUND", 404, "The tenant 'acme' has no single sign-on connection.")
    case "sub-viewer":
      return problem("INSUFFICIENT_SCOPE", 403, "role 'viewer' does not allow setting the single sign-on connection, which requires the tenant-admin role")
    case "sub-down":
      return problem("UNAVAILABLE", 503, "down")
    default:
      return ok()
  }
}

const Provisioning = HttpRouter.addAll([
  HttpRouter.route("GET", "/admin/console/tenants/:tenantId/sso", Effect.map(record, ({ actorSub }) => byActor(actorSub, () => HttpServerResponse.jsonUnsafe(connection)))),
  HttpRouter.route("PUT", "/admin/console/tenants/:tenantId/sso", Effect.map(record, ({ actorSub, issuer }) =>
    byActor(actorSub, () =>
      issuer === "https://unusable.test"
        ? problem("INVALID_REQUEST", 400, "The issuer cannot be used: its discovery document could not be reached (ENOTFOUND).")
        : HttpServerResponse.jsonUnsafe(connection)))),
  HttpRouter.route("POST", "/admin/console/tenants/:tenantId/sso/disable", Effect.map(record, ({ actorSub }) => byActor(actorSub, () => HttpServerResponse.empty({ status: 204 }))))
])

const ProvisioningServer = HttpRouter.serve(Provisioning, { disableLogger: true, disableListenLog: true }).pipe(
  Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0 }))
)

const Adapter = Layer.unwrap(
  Effect.map(HttpServer.HttpServer, (server) =>
    SsoDeskHttp.pipe(
      Layer.provide(Layer.succeed(ConsoleSettings, testSettings({ provisioningAdminUrl: `http://127.0.0.1:${(server.address as NetAddress.InetAddress).port}` }))),
      Layer.provide(FetchHttpClient.layer),
      Layer.provide(InternalSecret.fixed("console-test-secret-0123456789abcdef"))
    ))
).pipe(Layer.provideMerge(ProvisioningServer))

const actor = (userSub: string) => ({ tenantId, userSub, email: "alice@acme.test", role: "tenant-admin" as const })
const request = (issuer = "https://login.acme.test") =>
  new SsoConnectionRequest({ issuer, clientId: "portfolio-console", clientSecret: Redacted.make(secret), domains: ["acme.test"], roleClaim: "groups", roleMap: [{ value: "EA", role: "architect" }] })

layer(Adapter, { timeout: 30_000, excludeTestServices: true })("SsoDeskHttp, the tenant's single sign-on connection", (it) => {
  it.effect("reads the connection as the member, none for provisioning's 404, and its 403 as the member's refusal", () =>
    Effect.gen(function*() {
      const desk = yield* SsoDesk
      received.length = 0
      expect(Option.map(yield* desk.get(actor("sub-alice")), (c) => c.clientId)).toEqual(Option.some("portfolio-console"))
      expect(received.map((r) => [r.method, r.url])).toEqual([["GET", `/admin/console/tenants/${tenantId}/sso?actorSub=sub-alice`]])
      expect(yield* desk.get(actor("sub-none"))).toEqual(Option.none())
      expect(yield* Effect.flip(desk.get(actor("sub-viewer")))).toMatchObject({ _tag: "Refused", status: 403 })
      expect((yield* Effect.flip(desk.get(actor("sub-down"))))._tag).toBe("UpstreamUnavailable")
    }))

  it.effect("sets the connection with the member and the secret in the body; a 400 is the member's to read, with provisioning's detail", () =>
    Effect.gen(function*() {
      const desk = yield* SsoDesk
      received.length = 0
      expect((yield* desk.set(actor("sub-alice"), request())).redirectUri).toBe("https://portfolio.example/console/sso/acme/callback")
      expect(received).toEqual([{
        method: "PUT",
        url: `/admin/console/tenants/${tenantId}/sso`,
        body: {
          actorSub: "sub-alice",
          issuer: "https://login.acme.test",
          clientId: "portfolio-console",
          clientSecret: secret,
          domains: ["acme.test"],
          defaultRole: "viewer",
          roleClaim: "groups",
          roleMap: [{ value: "EA", role: "architect" }],
          required: false,
          breakGlass: [],
          emailVerifiedClaim: "email_verified"
        }
      }])
      expect(yield* Effect.flip(desk.set(actor("sub-alice"), request("https://unusable.test")))).toMatchObject({
        _tag: "Refused",
        status: 400,
        detail: "The issuer cannot be used: its discovery document could not be reached (ENOTFOUND)."
      })
      expect(yield* Effect.flip(desk.set(actor("sub-viewer"), request()))).toMatchObject({ _tag: "Refused", status: 403 })
      expect((yield* Effect.flip(desk.set(actor("sub-down"), request())))._tag).toBe("UpstreamUnavailable")
    }))

  it.effect("disables as the member; provisioning's 404 (no connection) is the member's to read", () =>
    Effect.gen(function*() {
      const desk = yield* SsoDesk
      received.length = 0
      yield* desk.disable(actor("sub-alice"))
      expect(received).toEqual([{ method: "POST", url: `/admin/console/tenants/${tenantId}/sso/disable`, body: { actorSub: "sub-alice" } }])
      expect(yield* Effect.flip(desk.disable(actor("sub-none")))).toMatchObject({ _tag: "Refused", status: 404, detail: "The tenant 'acme' has no single sign-on connection." })
      expect((yield* Effect.flip(desk.disable(actor("sub-down"))))._tag).toBe("UpstreamUnavailable")
    }))
})
