import { FetchHttpClient, HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "effect/http"
import type { NetAddress } from "effect/net"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { expect, layer } from "@effect/vitest"
import { type ErrorCode, makeProblem } from "@portfolio/domain"
import { InternalSecret } from "@portfolio/platform/security"
import { Effect, Layer, Option } from "effect"
import { createServer } from "node:http"
import { DirectoryDeskHttp } from "../../src/adapters/admin-apis/DirectoryDeskHttp.js"
import { ConsoleSettings } from "../../src/Config.js"
import { DirectoryDesk } from "../../src/ports/DirectoryDesk.js"
import { testSettings } from "../support/Memory.js"

/**
 * DirectoryDeskHttp's sign-in through a tenant's provider against a stand-in of provisioning's
 * admin port over real sockets: what each answer of `startSsoSignIn` and `completeSsoSignIn`
 * becomes for the console (the pages' tests run over the port in memory).
 */
const completions: Array<unknown> = []
const tenantId = "10000000-0000-4000-8000-000000000001"

const problem = (errorCode: ErrorCode, status: number, detail: string) =>
  HttpServerResponse.jsonUnsafe(makeProblem({ errorCode, detail, instance: "/admin", errorsUrl: "https://errors.test" }), {
    status,
    contentType: "application/problem+json"
  })

const account = {
  subject: "oidc|dana",
  email: "dana@acme.test",
  memberships: [{
    tenant: { id: tenantId, slug: "acme", createdAt: "2026-01-01T00:00:00.000Z" },
    member: { userSub: "oidc|dana", userEmail: "dana@acme.test", arbRole: "viewer", source: "SSO_JIT", grantedAt: "2026-07-01T09:00:00.000Z" }
  }],
  passwordSetAt: null
}

const Provisioning = HttpRouter.addAll([
  HttpRouter.route("GET", "/admin/tenants/:slug", Effect.map(HttpRouter.params, (params) =>
    params["slug"] === "acme" ? HttpServerResponse.jsonUnsafe({ id: tenantId, slug: "acme", createdAt: "2026-01-01T00:00:00.000Z" }) : problem("NOT_FOUND", 404, "No tenant acme."))),
  HttpRouter.route("POST", "/admin/tenants/:slug/sso/sign-ins", Effect.map(HttpRouter.params, (params) => {
    switch (params["slug"]) {
      case "acme":
        return HttpServerResponse.jsonUnsafe({ authorizationUrl: "https://idp.test/authorize?state=s-1", state: "s-1" }, { status: 201 })
      case "scripted":
        return HttpServerResponse.jsonUnsafe({ authorizationUrl: "javascript:alert(1)", state: "s-2" }, { status: 201 })
      case "long-state":
        return HttpServerResponse.jsonUnsafe({ authorizationUrl: "https://idp.test/authorize", state: "s".repeat(257) }, { status: 201 })
      case "down":
        return problem("UNAVAILABLE", 503, "The provider's discovery document cannot be read.")
      default:
        return problem("NOT_FOUND", 404, "This tenant has no single sign-on connection.")
    }
  })),
  HttpRouter.route("POST", "/admin/tenants/:slug/sso/completions", Effect.gen(function*() {
    const body = (yield* Effect.orDie(Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => request.json))) as { readonly state: string }
    completions.push(body)
    switch (body.state) {
      case "ok":
        return HttpServerResponse.jsonUnsafe(account)
      case "refused":
        return problem("UNAUTHENTICATED", 401, "The e-mail dana@acme.test is not verified.")
      case "removed":
        return problem("MEMBER_REMOVED", 409, "dana@acme.test was removed from acme.")
      case "gone":
        return problem("NOT_FOUND", 404, "This tenant has no single sign-on connection.")
      default:
        return problem("UNAVAILABLE", 503, "The provider's token endpoint does not answer.")
    }
  }))
])

const ProvisioningServer = HttpRouter.serve(Provisioning, { disableLogger: true, disableListenLog: true }).pipe(
  Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0 }))
)

const Adapter = Layer.unwrap(
  Effect.map(HttpServer.HttpServer, (server) =>
    DirectoryDeskHttp.pipe(
      Layer.provide(Layer.succeed(ConsoleSettings, testSettings({ provisioningAdminUrl: `http://127.0.0.1:${(server.address as NetAddress.InetAddress).port}` }))),
      Layer.provide(FetchHttpClient.layer),
      Layer.provide(InternalSecret.fixed("console-test-secret-0123456789abcdef"))
    ))
).pipe(Layer.provideMerge(ProvisioningServer))

const callbackUrl = "http://console.test/console/sso/acme/callback?code=c&state=ok"

layer(Adapter, { timeout: 30_000, excludeTestServices: true })("DirectoryDeskHttp, sign-in through the tenant's provider", (it) => {
  it.effect("begins with provisioning's URL and state; no connection, an outage and an answer it cannot use are told apart", () =>
    Effect.gen(function*() {
      const directory = yield* DirectoryDesk
      expect(yield* directory.startSsoSignIn("acme")).toEqual({ authorizationUrl: "https://idp.test/authorize?state=s-1", state: "s-1" })
      expect((yield* Effect.flip(directory.startSsoSignIn("nowhere")))._tag).toBe("NoSsoConnection")
      expect((yield* Effect.flip(directory.startSsoSignIn("down")))._tag).toBe("UpstreamUnavailable")
      // Where the browser must never be sent, and a state the completion could not carry back.
      expect((yield* Effect.flip(directory.startSsoSignIn("scripted")))._tag).toBe("UpstreamUnavailable")
      expect((yield* Effect.flip(directory.startSsoSignIn("long-state")))._tag).toBe("UpstreamUnavailable")
    }))

  it.effect("completes into the account, and maps 401 (with provisioning's reason), 409, 404 and 503", () =>
    Effect.gen(function*() {
      const directory = yield* DirectoryDesk
      completions.length = 0
      const signedIn = yield* directory.completeSsoSignIn("acme", "ok", callbackUrl)
      expect(signedIn).toEqual({ subject: "oidc|dana", email: "dana@acme.test", memberships: [{ tenantId, tenantSlug: "acme", role: "viewer" }], passwordSetAtMs: null, ssoOnlyTenantIds: [] })
      expect(completions).toEqual([{ state: "ok", callbackUrl }])
      expect(yield* Effect.flip(directory.completeSsoSignIn("acme", "refused", callbackUrl))).toMatchObject({
        _tag: "ProviderSignInRefused",
        reason: "The e-mail dana@acme.test is not verified."
      })
      expect(yield* Effect.flip(directory.completeSsoSignIn("acme", "removed", callbackUrl))).toMatchObject({ _tag: "RemovedMember", reason: "dana@acme.test was removed from acme." })
      expect((yield* Effect.flip(directory.completeSsoSignIn("acme", "gone", callbackUrl)))._tag).toBe("NoSsoConnection")
      expect((yield* Effect.flip(directory.completeSsoSignIn("acme", "down", callbackUrl)))._tag).toBe("UpstreamUnavailable")
      // What the contract would not take is refused without a call.
      completions.length = 0
      expect((yield* Effect.flip(directory.completeSsoSignIn("acme", "s".repeat(257), callbackUrl)))._tag).toBe("ProviderSignInRefused")
      expect((yield* Effect.flip(directory.completeSsoSignIn("acme", "ok", `${callbackUrl}&x=${"x".repeat(8192)}`)))._tag).toBe("ProviderSignInRefused")
      expect(completions).toEqual([])
    }))

  it.effect("finds the tenant of a slug, none for an unknown one or what is no slug", () =>
    Effect.gen(function*() {
      const directory = yield* DirectoryDesk
      expect(yield* directory.tenantIdOf("acme")).toEqual(Option.some(tenantId))
      expect(yield* directory.tenantIdOf("nowhere")).toEqual(Option.none())
      expect(yield* directory.tenantIdOf("Not A Slug")).toEqual(Option.none())
    }))
})
