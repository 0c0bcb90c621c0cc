import { HttpClient, HttpClientRequest, HttpRouter } from "effect/http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { CallerIdentity } from "@portfolio/domain"
import { answerProblems, ErrorsUrl, ProblemMiddlewareLive } from "@portfolio/platform/http"
import { InternalSecret, signedRequest } from "@portfolio/platform/security"
import { Clock, Effect, Layer } from "effect"
import { AdminHttpLive } from "../../src/adapters/http/Servers.js"
import { PartnerTokensJoseWith } from "../../src/adapters/jose/PartnerTokensJose.js"
import { PatCacheMemory } from "../../src/adapters/memory/PatCacheMemory.js"
import { ScimTokenCacheMemory } from "../../src/adapters/memory/ScimTokenCacheMemory.js"
import { RecentlyValidTokensMemory } from "../../src/adapters/memory/RecentlyValidTokensMemory.js"
import { RateLimitStoreMemory } from "../../src/adapters/memory/rate-limit/RateLimitStoreMemory.js"
import { SpentAddressesMemory } from "../../src/adapters/memory/rate-limit/SpentAddressesMemory.js"
import { GatewayStoresMemory } from "./UnitOfWorkMemory.js"
import { TestSigningKey } from "./SigningKeys.js"
import { testConfigLayer, TestSecret } from "./testConfig.js"

/** The gateway's admin API in process, on the memory stores, with a client that signs as the caller given. */

export const errorsUrl = "https://errors.example.test/api"
export const OperatorSubject = "operator:ops"
export const operator = new CallerIdentity({ tenantId: "00000000-0000-0000-0000-000000000000", subject: OperatorSubject, role: "operator", scope: "admin" })
export const member = new CallerIdentity({ tenantId: "00000000-0000-0000-0000-000000000000", subject: "x", role: "tenant-admin", scope: "write" })

/**
 * The admin API on a test server, every failure answered as problem+json as serveApi answers it
 * (an unknown route too), without the probes and the requests' records.
 */
export const AdminApiServed = HttpRouter.serve(
  Layer.mergeAll(Layer.provide(AdminHttpLive, ProblemMiddlewareLive), HttpRouter.middleware((app) => answerProblems(app), { global: true })),
  { disableLogger: true, disableListenLog: true }
).pipe(Layer.provideMerge(NodeHttpServer.layerTest))

export const AdminLive = AdminApiServed.pipe(
  Layer.provideMerge(
    Layer.mergeAll(
      GatewayStoresMemory,
      PartnerTokensJoseWith([TestSigningKey]).pipe(Layer.provide(testConfigLayer())),
      PatCacheMemory,
      ScimTokenCacheMemory,
      RecentlyValidTokensMemory,
      RateLimitStoreMemory,
      SpentAddressesMemory,
      // A proxy in front of the public port: the admin port must still not read X-Forwarded-For.
      testConfigLayer({ trustedProxyHops: 1 })
    )
  ),
  Layer.provideMerge(InternalSecret.fixed(TestSecret)),
  Layer.provideMerge(Layer.succeed(ErrorsUrl, errorsUrl))
)

const call = (request: HttpClientRequest.HttpClientRequest, as: CallerIdentity | null) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    // Signed by the test's clock, which is also the server's.
    const signed = as === null ? request : signedRequest(TestSecret, as, { nowMs: yield* Clock.currentTimeMillis })(request)
    const response = yield* client.execute(signed)
    return { status: response.status, body: (yield* response.json) as any, link: response.headers["link"] }
  }).pipe(Effect.scoped)

export const post = (path: string, body: unknown, as: CallerIdentity | null = operator) =>
  call(HttpClientRequest.post(path).pipe(HttpClientRequest.bodyJsonUnsafe(body)), as)

export const get = (path: string, query: Record<string, string>, as: CallerIdentity | null = operator) =>
  call(HttpClientRequest.get(path).pipe(HttpClientRequest.setUrlParams(query)), as)
