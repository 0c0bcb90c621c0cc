import { describe, expect, layer } from "@effect/vitest"
import { CallerIdentity } from "@portfolio/domain"
import { Effect, Option } from "effect"
import { TestClock } from "effect/testing"
import { hashToken } from "../../src/domain/TokenFormat.js"
import { AdminLive, get, operator, OperatorSubject, post } from "../support/AdminHttp.js"
import { ScimTokenRepositoryMemory } from "../support/ScimTokenRepositoryMemory.js"
import { SecurityLogMemory } from "@portfolio/platform/testing"

const acme = "3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f"
const beta = "8f7e6d5c-4b3a-4291-8f0e-9d8c7b6a5f4e"
/** The console signs as the tenant-admin it acts for, and records what they do in its own log. */
const consoleCaller = new CallerIdentity({ tenantId: operator.tenantId, subject: "console:admin@acme.example", role: "operator", scope: "admin" })

const tokens = (tenantId: string) => `/admin/tenants/${tenantId}/scim-tokens`
const revoke = (tenantId: string, id: string, as: CallerIdentity = operator) => post(`${tokens(tenantId)}/${id}/revoke`, undefined, as)

const loggedFor = (tenantId: string) =>
  Effect.map(Effect.flatMap(SecurityLogMemory, (m) => m.all), (all) => all.filter((e) => e.tenantId === tenantId).map((e) => `${e.action} ${e.target} by ${e.actorSub}`))

describe("gateway admin API: SCIM tokens", () => {
  layer(AdminLive)((it) => {
    it.effect("makes two tokens per tenant, showing each once and storing only its hash; a third is 409", () =>
      Effect.gen(function*() {
        const first = yield* post(tokens(acme), { label: "Okta" })
        expect(first.status).toBe(201)
        expect(first.body).toMatchObject({ tenantId: acme, label: "Okta", createdBy: OperatorSubject, lastUsedAt: null, revokedAt: null })
        expect(first.body.token).toMatch(/^ap_scim_[0-9A-Za-z]{36}$/)
        expect(first.body.tokenPrefix).toBe(first.body.token.slice(0, 11))
        const stored = Option.getOrThrow(yield* (yield* ScimTokenRepositoryMemory).get(first.body.id))
        expect(stored.tokenHash).toEqual(hashToken(first.body.token))
        expect(JSON.stringify(stored)).not.toContain(first.body.token.slice(11))

        // The second, made through the console for a tenant-admin, names them.
        const second = yield* post(tokens(acme), { label: "Okta (rotation)" }, consoleCaller)
        expect(second.status).toBe(201)
        expect(second.body.createdBy).toBe("console:admin@acme.example")

        const third = yield* post(tokens(acme), { label: "one too many" })
        expect(third.status).toBe(409)
        expect(third.body).toMatchObject({
          errorCode: "CONFLICT",
          detail: "This tenant has 2 active SCIM tokens, the most allowed: revoke the one the identity tool no longer uses, then make a new one."
        })
        // Another tenant's tokens are no obstacle.
        expect((yield* post(tokens(beta), { label: "Entra ID" })).status).toBe(201)
        // The operator's action is in the gateway's log; the console's is the console's to record.
        expect(yield* loggedFor(acme)).toEqual([`scim_token_created ${first.body.id} by ${OperatorSubject}`])
      }))

    it.effect("refuses a label that is empty, too long or on several lines (400), making nothing", () =>
      Effect.gen(function*() {
        const tenant = "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d"
        for (const label of ["", "   ", "x".repeat(81), "Okta\nprod"]) {
          const refused = yield* post(tokens(tenant), { label })
          expect(refused.status, JSON.stringify(label)).toBe(400)
          expect(refused.body.errorCode).toBe("INVALID_REQUEST")
        }
        expect((yield* get(tokens(tenant), {})).body).toEqual([])
      }))

    it.effect("lists active tokens first, then revoked ones, newest first in each, never the token itself", () =>
      Effect.gen(function*() {
        const tenant = "6b7c8d9e-0f1a-4b2c-9d3e-4f5a6b7c8d9e"
        const made: Array<any> = []
        for (const label of ["first", "second"]) {
          made.push((yield* post(tokens(tenant), { label })).body)
          yield* TestClock.adjust("1 minute")
        }
        expect((yield* revoke(tenant, made[0].id)).status).toBe(200)
        made.push((yield* post(tokens(tenant), { label: "third" })).body)
        yield* TestClock.adjust("1 minute")
        expect((yield* revoke(tenant, made[1].id)).status).toBe(200)
        made.push((yield* post(tokens(tenant), { label: "fourth" })).body)
        const listed = yield* get(tokens(tenant), {})
        expect(listed.status).toBe(200)
        expect(listed.body.map((t: any) => `${t.label} ${t.revokedAt === null ? "active" : "revoked"}`)).toEqual([
          "fourth active",
          "third active",
          "second revoked",
          "first revoked"
        ])
        for (const token of made) expect(JSON.stringify(listed.body)).not.toContain(token.token)
        expect(Object.keys(listed.body[0]).sort()).toEqual(["createdAt", "createdBy", "id", "label", "lastUsedAt", "revokedAt", "tenantId", "tokenPrefix"])
      }))

    it.effect("revokes once: revoking again answers the token as revoked the first time and logs nothing more", () =>
      Effect.gen(function*() {
        const tenant = "7c8d9e0f-1a2b-4c3d-8e4f-5a6b7c8d9e0f"
        const { id } = (yield* post(tokens(tenant), { label: "Okta" })).body
        const revoked = yield* revoke(tenant, id)
        expect(revoked.status).toBe(200)
        expect(revoked.body).toMatchObject({ id, tenantId: tenant, revokedAt: expect.any(String) })
        expect(revoked.body.token).toBeUndefined()
        yield* TestClock.adjust("1 minute")
        const again = yield* revoke(tenant, id)
        expect(again).toEqual(revoked)
        expect(yield* loggedFor(tenant)).toEqual([`scim_token_created ${id} by ${OperatorSubject}`, `scim_token_revoked ${id} by ${OperatorSubject}`])
      }))

    it.effect("answers 404 alike for an unknown id and for another tenant's token, which stays active", () =>
      Effect.gen(function*() {
        const owner = "8d9e0f1a-2b3c-4d4e-9f5a-6b7c8d9e0f1a"
        const other = "9e0f1a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b"
        const { id } = (yield* post(tokens(owner), { label: "Okta" })).body
        const foreign = yield* revoke(other, id)
        const unknown = yield* revoke(other, "0f1a2b3c-4d5e-4f6a-9b7c-8d9e0f1a2b3c")
        expect(foreign.status).toBe(404)
        // The same body but for the instance, which repeats the path asked.
        expect({ ...foreign.body, instance: undefined }).toEqual({ ...unknown.body, instance: undefined })
        expect(foreign.body.detail).toBe("This tenant has no SCIM token of this id.")
        const listed = (yield* get(tokens(owner), {})).body
        expect(listed.map((t: any) => [t.id, t.revokedAt])).toEqual([[id, null]])
        expect((yield* get(tokens(other), {})).body).toEqual([])
      }))
  })
})
