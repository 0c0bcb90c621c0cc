import { HttpClient, HttpClientRequest } from "effect/http"
import { expect, layer } from "@effect/vitest"
import { Effect, Ref } from "effect"
import { PublicHttpLive } from "../../src/adapters/http/Servers.js"
import { createInvitation, listInvitations } from "../../src/usecases/Invitations.js"
import { invite, tenantWithAdmin, tokenOf } from "../support/Fixtures.js"
import { MemoryLayer, MemoryStore } from "../support/Memory.js"
import { testServer } from "../support/TestServer.js"

/** The public port on the in-memory ports, whose identity provider a test can take down. */
const TestServer = testServer(PublicHttpLive, MemoryLayer())

const post = (path: string, password: string) =>
  Effect.flatMap(HttpClient.HttpClient, (client) =>
    client.execute(HttpClientRequest.post(path).pipe(HttpClientRequest.bodyUrlParams({ password, confirm: password }))))

layer(TestServer, { timeout: 30_000, excludeTestServices: true })("acceptance page during an identity provider outage", (it) => {
  it.effect("answers a plain 503 'try again later' page that names nothing, and the invitation stays PENDING", () =>
    Effect.gen(function*() {
      const { caller } = yield* tenantWithAdmin("outage")
      const invitation = yield* createInvitation(caller, invite("Jane@Outage.test", "architect"))
      const store = yield* MemoryStore
      const path = `/accept/${tokenOf((yield* Ref.get(store)).mail.at(-1)!.text)}`
      yield* Ref.update(store, (s) => ({ ...s, identityDown: true }))

      const down = yield* post(path, "a fine long password")
      expect(down.status).toBe(503)
      expect(down.headers["content-type"]).toContain("text/html")
      expect(down.headers["cache-control"]).toBe("no-store")
      expect(Number(down.headers["retry-after"])).toBeGreaterThan(0)
      const html = yield* down.text
      expect(html).toContain("Please try again later.")
      expect(html).not.toMatch(/<form/i)
      for (const secret of ["jane", "outage", "architect", "@", "keycloak", "ECONNREFUSED"]) {
        expect(html.toLowerCase(), `the outage page reveals '${secret}'`).not.toContain(secret.toLowerCase())
      }
      expect((yield* listInvitations(caller)).find((i) => i.id === invitation.id)?.status).toBe("PENDING")

      yield* Ref.update(store, (s) => ({ ...s, identityDown: false }))
      const up = yield* post(path, "a fine long password")
      expect(up.status).toBe(200)
      expect((yield* listInvitations(caller)).find((i) => i.id === invitation.id)?.status).toBe("ACCEPTED")
    }))
})
