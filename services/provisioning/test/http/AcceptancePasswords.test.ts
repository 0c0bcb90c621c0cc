import { HttpClient, HttpClientRequest } from "effect/http"
import { expect, layer } from "@effect/vitest"
import { escapeHtml } from "@portfolio/platform/http"
import { Effect, Layer, Ref } from "effect"
import { PublicHttpLive } from "../../src/adapters/http/Servers.js"
import { createInvitation, listInvitations } from "../../src/usecases/Invitations.js"
import { invite, tenantWithAdmin, tokenOf } from "../support/Fixtures.js"
import { captureLogs } from "../support/Logs.js"
import { MemoryLayer, MemoryStore } from "../support/Memory.js"
import { testServer } from "../support/TestServer.js"

// The server's own fibers log through this logger: the page must not log a token or a password.
const logs: Array<string> = []
const TestServer = testServer(PublicHttpLive, MemoryLayer()).pipe(Layer.provide(captureLogs(logs)))

const post = (path: string, password: string, confirm = password) =>
  Effect.flatMap(HttpClient.HttpClient, (client) =>
    client.execute(HttpClientRequest.post(path).pipe(HttpClientRequest.bodyUrlParams({ password, confirm }))))

const refusals: ReadonlyArray<readonly [string, string, string]> = [
  ["12 spaces", " ".repeat(12), "The password cannot be only spaces or other invisible characters."],
  ["6 emoji", "🔑🌍🚲🎻🍋🐙", "The password is too short: it has 6 characters and needs at least 12. Every letter, digit, space or emoji counts as one."],
  ["a common password in capitals", "LeaveMeAlone", "This password is on a list of common passwords that attackers try first. Please choose another one."],
  ["a sequence", "abcdefghijkl", "This password is only repeated or sequential characters (such as aaaa, abcd or 1234), which are easy to guess. Please choose another one."],
  ["the workspace's name", "Wonderland 2026!", "This password is mostly words from your invitation (the product's name, the workspace's name or your e-mail address), which are easy to guess. Leaving those out, it needs at least 12 characters."],
  ["the invitee's address", "Alice@Wonderland.test", "This password is mostly words from your invitation"],
  ["257 characters", "lantern orchard ".repeat(17).slice(0, 257), "The password is too long: it has 257 characters and may have at most 256."]
]

layer(TestServer, { timeout: 30_000, excludeTestServices: true })("acceptance page: the password rule", (it) => {
  it.effect("says in plain words why a password is refused, keeps the form, changes nothing, and logs no token or password", () =>
    Effect.gen(function*() {
      const { caller } = yield* tenantWithAdmin("wonderland")
      const invitation = yield* createInvitation(caller, invite("Alice@Wonderland.test", "viewer"))
      const store = yield* MemoryStore
      const token = tokenOf((yield* Ref.get(store)).mail.at(-1)!.text)
      const path = `/accept/${token}`

      for (const [name, password, message] of refusals) {
        const refused = yield* post(path, password)
        expect(refused.status, name).toBe(400)
        const html = yield* refused.text
        expect(html, name).toContain(`<p class="error" role="alert">${escapeHtml(message)}`)
        expect(html, name).toContain('<form method="post">')
        expect(html, name).toContain("Alice@Wonderland.test")
        // The form comes back empty: a refused password is not written into the page.
        expect(html, name).not.toMatch(/value=/)
      }
      expect((yield* listInvitations(caller)).find((i) => i.id === invitation.id)?.status).toBe("PENDING")
      expect((yield* Ref.get(store)).accounts.map((a) => a.email)).toEqual(["admin@wonderland.test"])

      const unreadable = yield* Effect.flatMap(HttpClient.HttpClient, (client) =>
        client.execute(HttpClientRequest.post(path).pipe(HttpClientRequest.bodyUrlParams({ password: "no confirmation field" }))))
      expect(unreadable.status).toBe(400)
      expect(yield* unreadable.text).toContain("The form could not be read. Please type the password again, at most 256 characters.")

      const passphrase = "🦊 jumps over the lazy 🐶"
      // An outage is logged by the page's use case: the one line this flow writes, naming neither.
      yield* Ref.update(store, (s) => ({ ...s, identityDown: true }))
      expect((yield* post(path, passphrase)).status).toBe(503)
      yield* Ref.update(store, (s) => ({ ...s, identityDown: false }))
      const done = yield* post(path, passphrase)
      expect(done.status).toBe(200)
      expect((yield* listInvitations(caller)).find((i) => i.id === invitation.id)?.status).toBe("ACCEPTED")
      expect((yield* Ref.get(store)).accounts.find((a) => a.email === "Alice@Wonderland.test")?.password).toBe(passphrase)

      expect(logs.some((line) => line.includes("identity provider unavailable"))).toBe(true)
      const secrets = [token, passphrase, ...refusals.map(([, password]) => password).filter((p) => p.trim() !== "")]
      expect(logs.filter((line) => secrets.some((secret) => line.includes(secret)))).toEqual([])
    }))
})
