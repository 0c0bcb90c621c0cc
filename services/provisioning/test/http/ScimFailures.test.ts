import { HttpClient, HttpClientRequest } from "effect/http"
import { SqlError } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { CallerIdentity } from "@portfolio/domain"
import { signedRequest } from "@portfolio/platform/security"
import { Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { PublicHttpLive } from "../../src/adapters/http/Servers.js"
import { ScimUserRepository } from "../../src/ports/ScimUserRepository.js"
import { MemoryLayer } from "../support/Memory.js"
import { testSecret, testServer } from "../support/TestServer.js"

/** A User store whose every read fails, as a bug would, or as a database that cannot be reached. */
const failing = (defect: unknown) => {
  const die = () => Effect.die(defect)
  return Layer.succeed(ScimUserRepository, ScimUserRepository.of({
    adoptMembers: die,
    list: die,
    findById: die,
    lockById: die,
    insert: die,
    update: die,
    markDeleted: die,
    memberChanged: die
  }))
}

const bug = new Error("relation provisioning.secret_table: column password_hash is ambiguous")
const unreachable = new SqlError.SqlError({
  reason: new SqlError.ConnectionError({
    cause: Object.assign(new Error("connect ECONNREFUSED 10.1.2.3:5432"), { code: "ECONNREFUSED" }),
    message: "Failed to execute statement"
  })
})

const serverOver = (defect: unknown) => testServer(PublicHttpLive, Layer.merge(MemoryLayer(), failing(defect)))

const getUser = Effect.gen(function*() {
  const caller = new CallerIdentity({ tenantId: randomUUID(), subject: "scim:token", role: "scim", scope: "write" })
  const request = signedRequest(testSecret, caller)(HttpClientRequest.get(`/api/v1/scim/v2/Users/${randomUUID()}`))
  const response = yield* (yield* HttpClient.HttpClient).execute(request)
  return { status: response.status, contentType: response.headers["content-type"], retryAfter: response.headers["retry-after"], body: yield* response.text }
})

layer(serverOver(bug), { timeout: 30_000, excludeTestServices: true })("a SCIM request that fails unexpectedly", (it) => {
  it.effect("is a SCIM 500 that names nothing internal", () =>
    Effect.gen(function*() {
      const answer = yield* getUser
      expect(answer).toMatchObject({ status: 500, contentType: "application/scim+json" })
      expect(JSON.parse(answer.body)).toEqual({
        schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"],
        status: "500",
        detail: "An internal error occurred. It has been logged."
      })
      expect(answer.body).not.toContain("secret_table")
    }))
})

layer(serverOver(unreachable), { timeout: 30_000, excludeTestServices: true })("a SCIM request while the database cannot be reached", (it) => {
  it.effect("is a SCIM 503 with Retry-After", () =>
    Effect.gen(function*() {
      const answer = yield* getUser
      expect(answer).toMatchObject({ status: 503, contentType: "application/scim+json", retryAfter: "5" })
      expect(answer.body).not.toContain("10.1.2.3")
    }))
})
