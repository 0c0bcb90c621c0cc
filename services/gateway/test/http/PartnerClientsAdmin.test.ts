import { HttpClient, HttpClientRequest } from "effect/http"
import { CallerIdentity } from "@portfolio/domain"
import { ErrorsUrl } from "@portfolio/platform/http"
import { InternalSecret, signedRequest } from "@portfolio/platform/security"
import { describe, expect, layer } from "@effect/vitest"
import { Clock, Effect, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { PatCacheMemory } from "../../src/adapters/memory/PatCacheMemory.js"
import { ScimTokenCacheMemory } from "../../src/adapters/memory/ScimTokenCacheMemory.js"
import { hashClientSecret, secretMatches } from "../../src/domain/PartnerClient.js"
import { PartnerClientRepository } from "../../src/ports/PartnerClientRepository.js"
import { AdminApiServed } from "../support/AdminHttp.js"
import { GatewayStoresMemory } from "../support/UnitOfWorkMemory.js"
import { testConfigLayer, TestSecret } from "../support/testConfig.js"

const errorsUrl = "https://errors.example.test/api"
const operator = new CallerIdentity({ tenantId: "00000000-0000-0000-0000-000000000000", subject: "ops", role: "operator", scope: "admin" })
const acme = "9e1c7b4a-2d3f-4e5a-8b6c-7d8e9f0a1b2c"
const beta = "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"

const AdminLive = AdminApiServed.pipe(
  Layer.provideMerge(Layer.mergeAll(GatewayStoresMemory, PatCacheMemory, ScimTokenCacheMemory, testConfigLayer())),
  Layer.provideMerge(InternalSecret.fixed(TestSecret)),
  Layer.provideMerge(Layer.succeed(ErrorsUrl, errorsUrl))
)

const call = (method: "GET" | "POST", path: string, body?: unknown) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    let request = method === "GET" ? HttpClientRequest.get(path) : HttpClientRequest.post(path)
    if (body !== undefined) request = HttpClientRequest.bodyJsonUnsafe(request, body)
    request = signedRequest(TestSecret, operator, { nowMs: yield* Clock.currentTimeMillis })(request)
    const response = yield* client.execute(request)
    return { status: response.status, body: (yield* response.json) as any }
  }).pipe(Effect.scoped)

const stored = (clientId: string) => Effect.flatMap(PartnerClientRepository, (store) => Effect.map(store.find(clientId), Option.getOrThrow))

describe("gateway admin API: partner clients", () => {
  layer(AdminLive)((it) => {
    it.effect("creates a client with the id service-partner-<name>-<random suffix>, showing its secret once and storing only its hash", () =>
      Effect.gen(function*() {
        const created = yield* call("POST", `/admin/tenants/${acme}/partner-clients`, { name: "erp-sync", scope: "read" })
        expect(created.status).toBe(201)
        expect(created.body).toMatchObject({ tenantId: acme, name: "erp-sync", scope: "read", state: "enabled", previousSecretExpiresAt: null })
        expect(created.body.clientId).toMatch(/^service-partner-erp-sync-[0-9a-z]{8}$/)
        expect(created.body.clientSecret).toMatch(/^ap_cs_[0-9A-Za-z]{46}$/)
        const record = yield* stored(created.body.clientId)
        expect(record.secretHash).toEqual(hashClientSecret(created.body.clientSecret))
        expect(JSON.stringify(record)).not.toContain(created.body.clientSecret)
        const listed = yield* call("GET", `/admin/tenants/${acme}/partner-clients`)
        const { clientSecret: _, ...shown } = created.body
        expect(listed.body).toEqual([shown])
      }))

    it.effect("refuses a name taken in the same tenant (409) and nowhere else, without naming another tenant's clients", () =>
      Effect.gen(function*() {
        const first = yield* call("POST", `/admin/tenants/${acme}/partner-clients`, { name: "taken", scope: "write" })
        expect(first.status).toBe(201)
        const again = yield* call("POST", `/admin/tenants/${acme}/partner-clients`, { name: "taken", scope: "read" })
        expect(again.status).toBe(409)
        expect(again.body.errorCode).toBe("CONFLICT")
        expect(again.body.detail).toBe("This tenant has a partner client named 'taken' already; choose another name.")
        // Another tenant's name is no obstacle, and its client gets an id of its own.
        const elsewhere = yield* call("POST", `/admin/tenants/${beta}/partner-clients`, { name: "taken", scope: "read" })
        expect(elsewhere.status).toBe(201)
        expect(elsewhere.body.clientId).not.toBe(first.body.clientId)
        expect(JSON.stringify(elsewhere.body)).not.toContain(first.body.clientId)
        const named = (yield* call("GET", `/admin/tenants/${acme}/partner-clients`)).body.filter((c: any) => c.name === "taken")
        expect(named.map((c: any) => c.clientId)).toEqual([first.body.clientId])
      }))

    it.effect("refuses a name or scope that is not one (400), creating nothing", () =>
      Effect.gen(function*() {
        const tenant = "5f6a7b8c-9d0e-4f1a-8b2c-3d4e5f6a7b8c"
        for (const body of [{ name: "Not_A_Slug", scope: "read" }, { name: "ok", scope: "admin" }, { name: "-x", scope: "read" }]) {
          const refused = yield* call("POST", `/admin/tenants/${tenant}/partner-clients`, body)
          expect(refused.status).toBe(400)
          expect(refused.body.errorCode).toBe("INVALID_REQUEST")
        }
        expect((yield* call("GET", `/admin/tenants/${tenant}/partner-clients`)).body).toEqual([])
      }))

    it.effect("rotates the secret: both valid during the grace, only the new one after it; 0 keeps none", () =>
      Effect.gen(function*() {
        const created = (yield* call("POST", `/admin/tenants/${acme}/partner-clients`, { name: "rotating", scope: "write" })).body
        const rotate = `/admin/partner-clients/${created.clientId}/rotate-secret`
        const rotated = yield* call("POST", rotate, { graceSeconds: 3600 })
        expect(rotated.status).toBe(200)
        expect(rotated.body.clientSecret).not.toBe(created.clientSecret)
        const nowMs = yield* Clock.currentTimeMillis
        expect(rotated.body.previousSecretExpiresAt).toBe(new Date(nowMs + 3_600_000).toISOString())
        let record = yield* stored(created.clientId)
        expect(secretMatches(record, created.clientSecret, nowMs)).toBe(true)
        expect(secretMatches(record, rotated.body.clientSecret, nowMs)).toBe(true)
        expect(secretMatches(record, created.clientSecret, nowMs + 3_600_000)).toBe(false)
        expect(secretMatches(record, rotated.body.clientSecret, nowMs + 3_600_000)).toBe(true)
        // The default grace is a day.
        yield* TestClock.adjust("1 minute")
        const byDefault = yield* call("POST", rotate, {})
        expect(byDefault.body.previousSecretExpiresAt).toBe(new Date(nowMs + 60_000 + 86_400_000).toISOString())
        const none = yield* call("POST", rotate, { graceSeconds: 0 })
        expect(none.body.previousSecretExpiresAt).toBeNull()
        record = yield* stored(created.clientId)
        expect(secretMatches(record, byDefault.body.clientSecret, nowMs + 60_000)).toBe(false)
        expect(secretMatches(record, none.body.clientSecret, nowMs + 60_000)).toBe(true)
        const tooLong = yield* call("POST", rotate, { graceSeconds: 7 * 86_400 + 1 })
        expect(tooLong.status).toBe(400)
      }))

    it.effect("disables and enables a client; an unknown client is a 404", () =>
      Effect.gen(function*() {
        const { clientId } = (yield* call("POST", `/admin/tenants/${acme}/partner-clients`, { name: "switch", scope: "read" })).body
        const disabled = yield* call("POST", `/admin/partner-clients/${clientId}/disable`)
        expect(disabled.body.state).toBe("disabled")
        expect((yield* stored(clientId)).disabledAt).not.toBeNull()
        const enabled = yield* call("POST", `/admin/partner-clients/${clientId}/enable`)
        expect(enabled.body.state).toBe("enabled")
        for (const path of ["/disable", "/enable"]) {
          const missing = yield* call("POST", `/admin/partner-clients/service-partner-nobody${path}`)
          expect(missing.status).toBe(404)
          expect(missing.body.detail).toBe("No partner client has the id 'service-partner-nobody'.")
        }
        expect((yield* call("POST", "/admin/partner-clients/service-partner-nobody/rotate-secret", {})).status).toBe(404)
      }))
  })
})
