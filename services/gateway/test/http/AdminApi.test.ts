import { PublicApi } from "@portfolio/domain"
import { describe, expect, layer } from "@effect/vitest"
import { DateTime, Effect, Result, Option } from "effect"
import { allowListOf } from "../../src/domain/AllowList.js"
import { hashPat } from "../../src/domain/Pat.js"
import { admitRequest } from "../../src/usecases/AdmitRequest.js"
import { AdminLive, errorsUrl, member, post } from "../support/AdminHttp.js"
import { PatRepositoryMemory } from "../support/PatRepositoryMemory.js"

const readPath = "/api/v1/referentiel/functions"
const readRoute = allowListOf(PublicApi).match("GET", readPath)

/** What the public port decides on a read with this token: the admission the hot path runs. */
const admitRead = (token: string) =>
  Effect.map(
    admitRequest({ method: "GET", path: readPath, route: readRoute, authorization: `Bearer ${token}`, clientIp: "192.0.2.1" }),
    (verdict) => verdict.outcome
  )

const holder = {
  tenantId: "9e1c7b4a-2d3f-4e5a-8b6c-7d8e9f0a1b2c",
  userSub: "auth0|holder",
  email: "holder@example.com",
  role: "tenant-admin",
  scope: "write"
}

describe("gateway admin API", () => {
  layer(AdminLive)((it) => {
    it.effect("creates a PAT, showing the token once and storing only its hash", () =>
      Effect.gen(function*() {
        const memory = yield* PatRepositoryMemory
        const now = yield* DateTime.now
        const created = yield* post("/admin/pats", holder)
        expect(created.status).toBe(201)
        expect(created.body.token).toMatch(/^ap_pat_[0-9A-Za-z]{36}$/)
        expect(created.body.tokenPrefix).toBe(created.body.token.slice(0, 10))
        expect(created.body.scope).toBe("write")
        expect(created.body.expiresAt).toBe(DateTime.formatIso(DateTime.add(now, { days: 90 })))
        const stored = Option.getOrThrow(yield* memory.get(created.body.id))
        expect(stored.tokenHash).toEqual(hashPat(created.body.token))
        expect(JSON.stringify(stored)).not.toContain(created.body.token)
        expect(stored).toMatchObject({ tenantId: holder.tenantId, userSub: holder.userSub, email: holder.email, role: "tenant-admin", revokedAt: null })
      }))

    it.effect("caps the lifetime at 366 days", () =>
      Effect.gen(function*() {
        expect((yield* post("/admin/pats", { ...holder, days: 366 })).status).toBe(201)
        const tooLong = yield* post("/admin/pats", { ...holder, days: 367 })
        expect(tooLong.status).toBe(400)
        expect(tooLong.body).toMatchObject({ errorCode: "INVALID_REQUEST", type: `${errorsUrl}/invalid-request`, instance: "/admin/pats" })
      }))

    it.effect("accepts only operator assertions", () =>
      Effect.gen(function*() {
        const anonymous = yield* post("/admin/pats", holder, null)
        expect(anonymous.status).toBe(401)
        expect(anonymous.body.errorCode).toBe("UNAUTHENTICATED")
        const notOperator = yield* post("/admin/pats", holder, member)
        expect(notOperator.status).toBe(403)
        expect(notOperator.body.errorCode).toBe("INSUFFICIENT_SCOPE")
      }))

    it.effect("revokes by token or by id, refusing the token at once; unknown ones are 404", () =>
      Effect.gen(function*() {
        const a = (yield* post("/admin/pats", holder)).body
        const b = (yield* post("/admin/pats", holder)).body
        // Verified once, so it sits in the cache.
        expect(Result.isSuccess(yield* admitRead(a.token))).toBe(true)
        const byToken = yield* post("/admin/pats/revoke", { tokenOrId: a.token })
        expect(byToken.status).toBe(200)
        expect(byToken.body.id).toBe(a.id)
        const refused = Option.getOrThrow(Result.getFailure(yield* admitRead(a.token)))
        expect(refused.detail).toBe("The token has been revoked.")
        const byId = yield* post("/admin/pats/revoke", { tokenOrId: b.id })
        expect(byId.body.id).toBe(b.id)
        const again = yield* post("/admin/pats/revoke", { tokenOrId: b.id })
        expect(again.body.revokedAt).toBe(byId.body.revokedAt)
        for (const tokenOrId of ["2b0c8f3e-4d5a-4b6c-9d7e-8f9a0b1c2d3e", "ap_pat_not-a-token", "anything"]) {
          const missing = yield* post("/admin/pats/revoke", { tokenOrId })
          expect(missing.status).toBe(404)
          expect(missing.body).toEqual({
            type: `${errorsUrl}/not-found`,
            title: "Not found",
            status: 404,
            detail: "No personal access token has this id or value.",
            instance: "/admin/pats/revoke",
            errorCode: "NOT_FOUND"
          })
        }
      }))
  })
})
