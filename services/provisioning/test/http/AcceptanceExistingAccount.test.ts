import { HttpClient, HttpClientRequest } from "effect/http"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Redacted, Ref } from "effect"
import { PublicHttpLive } from "../../src/adapters/http/Servers.js"
import { acceptInvitation } from "../../src/usecases/Acceptance.js"
import { createInvitation, listInvitations } from "../../src/usecases/Invitations.js"
import { listMembers } from "../../src/usecases/Members.js"
import { invite, lastMailTo, pageClient, tenantWithAdmin, tokenOf } from "../support/Fixtures.js"
import { captureLogs } from "../support/Logs.js"
import { MemoryLayer, MemoryStore } from "../support/Memory.js"
import { testServer } from "../support/TestServer.js"

// The server's own fibers log through this logger: the page must not log a password.
const logs: Array<string> = []
const TestServer = testServer(PublicHttpLive, MemoryLayer()).pipe(Layer.provide(captureLogs(logs)))

const get = (path: string) => Effect.flatMap(HttpClient.HttpClient, (client) => client.execute(HttpClientRequest.get(path)))
const post = (path: string, fields: Record<string, string>) =>
  Effect.flatMap(HttpClient.HttpClient, (client) => client.execute(HttpClientRequest.post(path).pipe(HttpClientRequest.bodyUrlParams(fields))))

const current = "rosa's own long passphrase"

layer(TestServer, { timeout: 30_000, excludeTestServices: true })("acceptance page: an account that already has a password", (it) => {
  it.effect("asks for that password instead of a new one, refuses a wrong one with 401 keeping the form, and joins with the right one", () =>
    Effect.gen(function*() {
      // Rosa is tenant-admin of home, her password set through her welcome link, and is invited to club.
      yield* tenantWithAdmin("home", "rosa@home.test")
      yield* acceptInvitation(tokenOf(yield* lastMailTo("rosa@home.test")), Redacted.make(current), pageClient)
      const { caller } = yield* tenantWithAdmin("club")
      const invitation = yield* createInvitation(caller, invite("Rosa@Home.test", "contributor"))
      const path = `/accept/${tokenOf(yield* lastMailTo("rosa@home.test"))}`
      const store = yield* MemoryStore
      const account = (yield* Ref.get(store)).accounts.find((a) => a.email === "rosa@home.test")!

      const form = yield* get(path)
      expect(form.status).toBe(200)
      expect(form.headers["cache-control"]).toBe("no-store")
      const html = yield* form.text
      expect(html).toContain("<title>Accept your invitation</title>")
      expect(html).toContain("You are invited to join <strong>club</strong> as contributor, as <strong>Rosa@Home.test</strong>.")
      expect(html).toContain("<p>You already have an account: enter your password to accept.</p>")
      expect(html).toMatch(/<input id="password" name="password" type="password" autocomplete="current-password"[^>]*required>/)
      // One field, and no new password offered.
      expect(html.match(/<input /g)).toHaveLength(1)
      expect(html).not.toContain('name="confirm"')
      expect(html).not.toMatch(/choose a password|new-password|minlength/i)

      // Wrong, even one the password rule would refuse: refused as wrong, with the form again.
      for (const typed of ["a brand new passphrase", "short"]) {
        const refused = yield* post(path, { password: typed })
        expect(refused.status, typed).toBe(401)
        const again = yield* refused.text
        expect(again).toContain('<p class="error" role="alert">The password is not right.</p>')
        expect(again).toContain("You already have an account: enter your password to accept.")
        expect(again).not.toMatch(/value=/)
      }
      // No password typed at all is no guess: the form again, nothing counted.
      const empty = yield* post(path, { password: "" })
      expect(empty.status).toBe(400)
      expect(yield* empty.text).toContain("The form could not be read. Please type your password again.")
      expect((yield* listInvitations(caller)).find((i) => i.id === invitation.id)?.status).toBe("PENDING")
      expect((yield* listMembers(caller)).map((m) => m.userEmail)).toEqual(["admin@club.test"])
      expect((yield* Ref.get(store)).invitations.find((row) => row.record.id === invitation.id)?.wrongPasswords).toBe(2)

      const done = yield* post(path, { password: current })
      expect(done.status).toBe(200)
      expect(yield* done.text).toContain(
        "<p>You are now a member of <strong>club</strong>. Your password has not changed: sign in with it as before.</p>"
      )
      expect((yield* listMembers(caller)).find((m) => m.userEmail === "Rosa@Home.test")).toMatchObject({ userSub: account.subject, source: "INVITATION" })
      expect((yield* Ref.get(store)).accounts.find((a) => a.email === "rosa@home.test")).toEqual(account)
      expect((yield* get(path)).status).toBe(404)

      expect(logs.filter((line) => [current, "a brand new passphrase"].some((secret) => line.includes(secret)))).toEqual([])
    }))

  it.effect("shows the form of the account as it is when the form is posted: a password chosen meanwhile makes the post a check of it", () =>
    Effect.gen(function*() {
      const { caller } = yield* tenantWithAdmin("racing")
      yield* createInvitation(caller, invite("lee@racing.test", "viewer"))
      const path = `/accept/${tokenOf(yield* lastMailTo("lee@racing.test"))}`
      expect(yield* (yield* get(path)).text).toContain("Choose a password")
      // Lee accepts another workspace's link first, choosing a password there.
      const { caller: other } = yield* tenantWithAdmin("elsewhere")
      yield* createInvitation(other, invite("lee@racing.test", "viewer"))
      yield* acceptInvitation(tokenOf(yield* lastMailTo("lee@racing.test")), Redacted.make(current), pageClient)
      const chosen = yield* post(path, { password: "yet another passphrase", confirm: "yet another passphrase" })
      expect(chosen.status).toBe(401)
      expect(yield* chosen.text).toContain("You already have an account: enter your password to accept.")
      expect((yield* post(path, { password: current, confirm: current })).status).toBe(200)
    }))
})
