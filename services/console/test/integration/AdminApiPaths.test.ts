import { FetchHttpClient, HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "effect/http"
import type { NetAddress } from "effect/net"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { expect, layer } from "@effect/vitest"
import { InternalSecret } from "@portfolio/platform/security"
import { Effect, Layer, Option } from "effect"
import { createServer } from "node:http"
import { DirectoryDeskHttp } from "../../src/adapters/admin-apis/DirectoryDeskHttp.js"
import { MemberDeskHttp } from "../../src/adapters/admin-apis/MemberDeskHttp.js"
import { ConsoleSettings } from "../../src/Config.js"
import { DirectoryDesk } from "../../src/ports/DirectoryDesk.js"
import { MemberDesk } from "../../src/ports/MemberDesk.js"
import { testSettings } from "../support/Memory.js"

/**
 * The console's admin API adapters against a stand-in of provisioning's admin port over real
 * sockets, routed as the services route (find-my-way): an id travels as one percent-encoded path
 * segment, whatever it holds, and the service's router reads back the very id (issue 25, finding 4).
 */
const received: Array<{ readonly method: string; readonly url: string; readonly params: Readonly<Record<string, string | undefined>> }> = []

const recorded = (answer: (params: Readonly<Record<string, string | undefined>>) => HttpServerResponse.HttpServerResponse) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const params = yield* HttpRouter.params
    received.push({ method: request.method, url: request.url, params })
    return answer(params)
  })

const Provisioning = HttpRouter.addAll([
  HttpRouter.route("POST", "/admin/console/tenants/:tenantId/members/:userSub/remove", recorded(() => HttpServerResponse.empty({ status: 204 }))),
  HttpRouter.route("POST", "/admin/console/tenants/:tenantId/invitations/:id/revoke", recorded(() => HttpServerResponse.empty({ status: 204 }))),
  HttpRouter.route("GET", "/admin/accounts/:subject", recorded((params) =>
    HttpServerResponse.jsonUnsafe({
      subject: params["subject"],
      email: "someone@acme.test",
      memberships: [],
      // A provisioning older than the field answers without it.
      ...(params["subject"] === "sub-reset" ? { passwordSetAt: "2026-07-01T09:00:00.000Z" } : {}),
      ...(params["subject"] === "sub-unset" ? { passwordSetAt: null } : {})
    })))
])

const ProvisioningServer = HttpRouter.serve(Provisioning, { disableLogger: true, disableListenLog: true }).pipe(
  Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0 }))
)

/** The adapters as main.ts makes them (fetch), pointed at the stand-in. */
const Adapters = Layer.unwrap(
  Effect.map(HttpServer.HttpServer, (server) => {
    const address = server.address as NetAddress.InetAddress
    return Layer.mergeAll(MemberDeskHttp, DirectoryDeskHttp).pipe(
      Layer.provide(Layer.succeed(ConsoleSettings, testSettings({ provisioningAdminUrl: `http://127.0.0.1:${address.port}` }))),
      Layer.provide(FetchHttpClient.layer),
      Layer.provide(InternalSecret.fixed("console-test-secret-0123456789abcdef"))
    )
  })
).pipe(Layer.provideMerge(ProvisioningServer))

const tenantId = "10000000-0000-4000-8000-000000000001"
const actor = { tenantId, userSub: "sub-alice", email: "alice@acme.test", role: "tenant-admin" as const }

/** Ids a path cannot carry as they are: a query, a fragment, a tab URL parsers strip, a '%', a space. */
const awkward = ["sub-bob?x=1", "sub-bob#x", ".\t.", "\t", "auth0|a b%25", "é"]

layer(Adapters, { timeout: 30_000, excludeTestServices: true })("console admin API paths", (it) => {
  it.effect("sends each path parameter percent-encoded, as one segment, and the service reads the id itself", () =>
    Effect.gen(function*() {
      const members = yield* MemberDesk
      const directory = yield* DirectoryDesk
      received.length = 0
      for (const userSub of awkward) yield* members.removeMember(actor, userSub)
      for (const id of awkward) yield* members.revokeInvitation(actor, id)
      for (const subject of awkward) expect(Option.map(yield* directory.account(subject), (a) => a.subject)).toEqual(Option.some(subject))

      const base = `/admin/console/tenants/${tenantId}`
      expect(received).toEqual([
        ...awkward.map((userSub) => ({ method: "POST", url: `${base}/members/${encodeURIComponent(userSub)}/remove`, params: { tenantId, userSub } })),
        ...awkward.map((id) => ({ method: "POST", url: `${base}/invitations/${encodeURIComponent(id)}/revoke`, params: { tenantId, id } })),
        ...awkward.map((subject) => ({ method: "GET", url: `/admin/accounts/${encodeURIComponent(subject)}`, params: { subject } }))
      ])
    }))

  it.effect("reads when the account's password was last set, and none from a provisioning that does not say", () =>
    Effect.gen(function*() {
      const directory = yield* DirectoryDesk
      const setAt = (subject: string) => Effect.map(directory.account(subject), Option.map((a) => a.passwordSetAtMs))
      expect(yield* setAt("sub-reset")).toEqual(Option.some(Date.parse("2026-07-01T09:00:00.000Z")))
      expect(yield* setAt("sub-unset")).toEqual(Option.some(null))
      expect(yield* setAt("sub-older-provisioning")).toEqual(Option.some(null))
    }))

  it.effect("sends nothing for an id no path segment can be: an outage of the page, never a call to another path", () =>
    Effect.gen(function*() {
      const members = yield* MemberDesk
      received.length = 0
      for (const userSub of ["", ".", "..", "a\u0000b"]) {
        expect((yield* Effect.flip(members.removeMember(actor, userSub)))._tag, JSON.stringify(userSub)).toBe("UpstreamUnavailable")
      }
      expect(received).toEqual([])
    }))
})
