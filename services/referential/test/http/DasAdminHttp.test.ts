import { HttpClient, HttpClientRequest, HttpRouter } from "effect/http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { expect, layer } from "@effect/vitest"
import { CallerIdentity } from "@portfolio/domain"
import { ErrorsUrl, ProblemMiddlewareLive } from "@portfolio/platform/http"
import { AssertionHeader, InternalSecret, signedRequest } from "@portfolio/platform/security"
import { Effect, Layer } from "effect"
import { AdminHttpLive } from "../../src/adapters/http/Servers.js"
import { putApplication } from "../../src/usecases/PutApplication.js"
import { appInput, tenantA, tenantB } from "../support/Fixtures.js"
import { MemoryLayer } from "../support/Memory.js"

const secret = "referential-das-http-test-secret-of-32-chars"
const operator = new CallerIdentity({ tenantId: "00000000-0000-0000-0000-000000000000", subject: "operator-9", role: "operator", scope: "admin" })

/** The admin port as main.ts serves it, on an ephemeral port, over the in-memory ports. */
const AdminPort = HttpRouter.serve(AdminHttpLive.pipe(Layer.provide(ProblemMiddlewareLive)), { disableLogger: true, disableListenLog: true }).pipe(
  Layer.provideMerge(NodeHttpServer.layerTest),
  Layer.provide(InternalSecret.fixed(secret)),
  Layer.provide(Layer.succeed(ErrorsUrl, "https://errors.test/api")),
  Layer.provideMerge(MemoryLayer)
)

const post = (path: string, body?: unknown) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    let request = HttpClientRequest.post(path)
    if (body !== undefined) request = HttpClientRequest.bodyJsonUnsafe(request, body)
    request = HttpClientRequest.setHeader(request, AssertionHeader, signedRequest(secret, operator, { audience: "referential" })(request).headers[AssertionHeader]!)
    const response = yield* client.execute(request)
    return { status: response.status, body: (yield* response.json) as any }
  }).pipe(Effect.scoped)

// Real clocks: the assertion is signed with the wall clock and checked against the service's.
layer(AdminPort, { timeout: 30_000, excludeTestServices: true })("DAS on the referential's admin port", (it) => {
  it.effect("create answers 201 with a DRAFT; submit answers the SUBMITTED record by the operator, then 409", () =>
    Effect.gen(function*() {
      yield* putApplication(tenantA, "APP-H", appInput({ name: "H" }), "ops")
      const created = yield* post(`/admin/tenants/${tenantA}/das`, { applicationCode: "APP-H", title: "Dossier", content: { a: [1] } })
      expect(created.status).toBe(201)
      expect(created.body).toMatchObject({ applicationCode: "APP-H", title: "Dossier", content: { a: [1] }, status: "DRAFT", submittedBy: null })

      const submitted = yield* post(`/admin/tenants/${tenantA}/das/${created.body.id}/submit`)
      expect(submitted.status).toBe(200)
      expect(submitted.body).toMatchObject({ id: created.body.id, status: "SUBMITTED", submittedBy: "operator-9" })

      const again = yield* post(`/admin/tenants/${tenantA}/das/${created.body.id}/submit`)
      expect(again.status).toBe(409)
      expect(again.body).toMatchObject({ errorCode: "CONFLICT", detail: `DAS '${created.body.id}' is already submitted.` })

      const elsewhere = yield* post(`/admin/tenants/${tenantB}/das/${created.body.id}/submit`)
      expect(elsewhere.body).toMatchObject({ status: 404, errorCode: "NOT_FOUND" })
    }))

  it.effect("content that is not an object, or over 64 KiB, is a 400; an unknown application a 404", () =>
    Effect.gen(function*() {
      for (const content of [[1], "text", 3]) {
        const refused = yield* post(`/admin/tenants/${tenantA}/das`, { applicationCode: "APP-H", title: "Bad", content })
        expect(refused.body).toMatchObject({ status: 400, errorCode: "INVALID_REQUEST" })
      }
      const large = yield* post(`/admin/tenants/${tenantA}/das`, { applicationCode: "APP-H", title: "Big", content: { t: "x".repeat(65_536) } })
      expect(large.body).toMatchObject({ status: 400, errorCode: "INVALID_REQUEST" })
      const unknown = yield* post(`/admin/tenants/${tenantA}/das`, { applicationCode: "APP-NONE", title: "Lost" })
      expect(unknown.body).toMatchObject({ status: 404, errorCode: "NOT_FOUND", detail: "Application 'APP-NONE' does not exist." })
    }))
})
