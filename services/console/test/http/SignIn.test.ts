import { expect, layer } from "@effect/vitest"
import { Effect, Ref } from "effect"
import { sessionIdHash } from "../../src/domain/SessionRules.js"
import { MemoryWorld } from "../support/Memory.js"
import { alice, bob, everyone, gina, max, vera } from "../support/People.js"
import { browser, consoleServer, csrfOf, SessionCookie, SignInCookie } from "../support/TestServer.js"

const world = Effect.flatMap(MemoryWorld, Ref.get)
const actions = Effect.map(world, (w) => w.events.map((e) => e.action))
/** A refused sign-in is filed after its answer: the log, once it holds `count` entries more than `before`. */
const eventsAfter = (before: number, count: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < 200; i++) {
      const events = (yield* world).events
      if (events.length >= before + count) return events.slice(before)
      yield* Effect.sleep("10 millis")
    }
    return (yield* world).events.slice(before)
  })

layer(consoleServer(everyone()), { timeout: 30_000, excludeTestServices: true })("console sign-in", (it) => {
  it.effect("signs in with the account's e-mail and password: a new HttpOnly, SameSite=Lax session cookie under /console, recorded", () =>
    Effect.gen(function*() {
      const b = browser()
      const form = yield* b.get("/console/sign-in")
      expect(form.status).toBe(200)
      expect(form.headers["cache-control"]).toBe("no-store")
      expect(form.headers["content-type"]).toBe("text/html; charset=utf-8")
      expect(form.headers["content-security-policy"]).toContain("frame-ancestors 'none'")
      expect(form.setCookies.find((c) => c.startsWith(`${SignInCookie}=`))).toMatch(/HttpOnly/i)
      // A session id planted before sign-in (session fixation) is never the one the member gets.
      b.jar.set(SessionCookie, "planted-by-someone-else")
      const signedIn = yield* b.post("/console/sign-in", { csrf: csrfOf(form), email: "Bob@Acme.test", password: bob.password })
      expect(signedIn.status).toBe(303)
      expect(signedIn.location).toBe("/console/tokens")
      const cookie = signedIn.setCookies.find((c) => c.startsWith(`${SessionCookie}=`))!
      expect(cookie).toMatch(/HttpOnly/i)
      expect(cookie).toMatch(/SameSite=Lax/i)
      expect(cookie).toMatch(/Path=\/console/i)
      // Plain http is local use: no Secure flag, or the browser would drop the cookie.
      expect(cookie).not.toMatch(/Secure/i)
      const sessionId = b.jar.get(SessionCookie)!
      expect(sessionId).not.toBe("planted-by-someone-else")
      expect(sessionId).toMatch(/^[A-Za-z0-9_-]{43}$/)
      // Stored as its hash only.
      const w = yield* world
      expect(w.sessions.has(sessionIdHash(sessionId))).toBe(true)
      expect([...w.sessions.keys()].some((k) => k === sessionId)).toBe(false)
      const tokens = yield* b.get("/console/tokens")
      expect(tokens.status).toBe(200)
      expect(tokens.html).toContain("bob@acme.test (architect)")
      expect(w.events.at(-1)).toMatchObject({ action: "sign_in", tenantId: bob.account.memberships[0]!.tenantId, actorEmail: "bob@acme.test" })

      // Signing in again gives another session id.
      const again = browser()
      yield* again.signIn("bob@acme.test", bob.password)
      expect(again.jar.get(SessionCookie)).not.toBe(sessionId)
    }))

  it.effect("says the same for a wrong password and an unknown e-mail, and records each failure", () =>
    Effect.gen(function*() {
      const before = (yield* world).events.length
      const wrong = yield* browser().signIn("alice@acme.test", "not her passphrase at all")
      const unknown = yield* browser().signIn("nobody@acme.test", "not her passphrase at all")
      const notEmail = yield* browser().signIn("nobody", "not her passphrase at all")
      for (const page of [wrong, unknown, notEmail]) {
        expect(page.status).toBe(401)
        expect(page.html).toContain("The e-mail or the password is not right.")
        expect(page.setCookies.some((c) => c.startsWith(`${SessionCookie}=`))).toBe(false)
      }
      const filed = yield* eventsAfter(before, 3)
      expect(filed.map((e) => e.action)).toEqual(["sign_in_failed", "sign_in_failed", "sign_in_failed"])
      // Filed where someone reads it: in each tenant of Alice's account, for its admins; an e-mail
      // of no account under no tenant, for operators. The order is the filing's, after each answer.
      const failures = filed.map((e) => ({ tenantId: e.tenantId, actorEmail: e.actorEmail }))
      expect(failures).toEqual(expect.arrayContaining([
        ...alice.account.memberships.map((m) => ({ tenantId: m.tenantId, actorEmail: "alice@acme.test" })),
        { tenantId: null, actorEmail: "nobody@acme.test" },
        { tenantId: null, actorEmail: "nobody" }
      ]))
    }))

  it.effect("files a failed sign-in in the tenants of the e-mail's account, where their admins read it", () =>
    Effect.gen(function*() {
      const before = (yield* world).events.length
      yield* browser().signIn("bob@acme.test", "not his passphrase at all")
      const filed = (yield* eventsAfter(before, bob.account.memberships.length)).filter((e) => e.action === "sign_in_failed" && e.actorEmail === "bob@acme.test")
      expect(filed.map((e) => e.tenantId)).toEqual(bob.account.memberships.map((m) => m.tenantId))
      // The tenant-admin's security page lists it.
      const admin = browser()
      yield* admin.signIn("alice@acme.test", alice.password)
      const page = yield* admin.get("/console/admin/security")
      expect(page.status).toBe(200)
      expect(page.html).toContain("sign_in_failed")
      expect(page.html).toContain("bob@acme.test")
    }))

  it.effect("refuses a typed e-mail holding a control character as malformed: nothing looked up, counted or filed", () =>
    Effect.gen(function*() {
      const before = yield* world
      for (const email of ["alice@acme.test\u0000", "\u001b]0;pwned\u0007\u001b[31mattacker\u001b[0m@acme.test", "alice\u202e@acme.test"]) {
        const page = yield* browser().signIn(email, alice.password)
        expect(page.status, JSON.stringify(email)).toBe(400)
        expect(page.html).toContain("Please give your e-mail and password.")
        expect(page.html).not.toContain("\u001b")
      }
      // Given time to file anything it would have filed after its answers.
      yield* Effect.sleep("100 millis")
      const after = yield* world
      expect(after.attempts.length).toBe(before.attempts.length)
      expect(after.events.length).toBe(before.events.length)
    }))

  it.effect("locks an e-mail after 5 failures for the window, without checking its password, even the right one", () =>
    Effect.gen(function*() {
      const checksBefore = (yield* world).passwordChecks
      const before = (yield* world).events.length
      for (let i = 0; i < 5; i++) expect((yield* browser().signIn("GINA@globex.test", `wrong guess number ${i}`)).status).toBe(401)
      const locked = yield* browser().signIn("gina@globex.test", gina.password)
      expect(locked.status).toBe(429)
      expect(locked.html).toContain("Too many failed attempts. Try again in 15 minutes.")
      // One check per admitted attempt; the locked one never reached provisioning.
      expect((yield* world).passwordChecks - checksBefore).toBe(5)
      const filed = yield* eventsAfter(before, 6)
      expect(filed.map((e) => e.action).sort()).toEqual([...Array(5).fill("sign_in_failed"), "sign_in_locked"])
      expect(filed.find((e) => e.action === "sign_in_locked")?.tenantId).toBe(gina.account.memberships[0]!.tenantId)
      // Further attempts of the window are refused alike, and recorded no more: a stranger who knows
      // the address cannot fill the tenant's log with them.
      for (let i = 0; i < 10; i++) expect((yield* browser().signIn("gina@globex.test", gina.password)).status).toBe(429)
      yield* Effect.sleep("100 millis")
      expect((yield* world).events.slice(before).filter((e) => e.action === "sign_in_locked")).toHaveLength(1)
      // Another e-mail from the same address is not locked by it.
      expect((yield* browser().signIn("bob@acme.test", bob.password)).status).toBe(303)
      // The window passes (here: the attempts age out), and the right password works again.
      yield* Effect.flatMap(MemoryWorld, (ref) => Ref.update(ref, (w) => ({ ...w, attempts: w.attempts.map((a) => ({ ...a, atMs: a.atMs - 16 * 60_000 })) })))
      expect((yield* browser().signIn("gina@globex.test", gina.password)).status).toBe(303)
    }))

  it.effect("refuses a sign-in form without its cookie, with another token, or posted from another origin", () =>
    Effect.gen(function*() {
      const b = browser()
      const form = yield* b.get("/console/sign-in")
      const token = csrfOf(form)
      const checksBefore = (yield* world).passwordChecks
      const forged = yield* b.post("/console/sign-in", { csrf: "forged", email: "bob@acme.test", password: bob.password })
      expect(forged.status).toBe(403)
      const fresh = csrfOf(forged)
      const crossSite = yield* b.post("/console/sign-in", { csrf: fresh, email: "bob@acme.test", password: bob.password }, { origin: "https://evil.test" })
      expect(crossSite.status).toBe(403)
      const noCookie = browser()
      const withoutCookie = yield* noCookie.post("/console/sign-in", { csrf: token, email: "bob@acme.test", password: bob.password })
      expect(withoutCookie.status).toBe(403)
      expect((yield* world).passwordChecks).toBe(checksBefore)
    }))

  it.effect("asks a member of several workspaces to choose one, and only among theirs", () =>
    Effect.gen(function*() {
      const b = browser()
      const signedIn = yield* b.signIn("max@both.test", max.password)
      expect(signedIn.location).toBe("/console/workspace")
      expect((yield* b.get("/console/tokens")).location).toBe("/console/workspace")
      const chooser = yield* b.get("/console/workspace")
      expect(chooser.html).toContain("acme (contributor)")
      expect(chooser.html).toContain("globex (tenant-admin)")
      const foreign = yield* b.post("/console/workspace", { csrf: csrfOf(chooser), tenantId: "00000000-0000-4000-8000-00000000c0c0" })
      expect(foreign.status).toBe(200)
      expect((yield* b.get("/console/tokens")).location).toBe("/console/workspace")
      const chosen = yield* b.post("/console/workspace", { csrf: csrfOf(chooser), tenantId: max.account.memberships[1]!.tenantId })
      expect(chosen.location).toBe("/console/tokens")
      const admin = yield* b.get("/console/admin/requests")
      expect(admin.status).toBe(200)
      expect(admin.html).toContain("globex")
    }))

  it.effect("keeps a password out of the workspaces whose single sign-on is required, from the next page of a session already open", () =>
    Effect.gen(function*() {
      const setSsoOnly = (subject: string, tenantIds: ReadonlyArray<string>) =>
        Effect.flatMap(MemoryWorld, (ref) =>
          Ref.update(ref, (w) => ({
            ...w,
            people: w.people.map((p) => (p.account.subject === subject ? { ...p, account: { ...p.account, ssoOnlyTenantIds: tenantIds } } : p))
          })))
      const [acme, globex] = max.account.memberships.map((m) => m.tenantId)
      // Max, open in Globex with a password; then Globex requires its provider.
      const b = browser()
      yield* b.signIn("max@both.test", max.password)
      const chooser = yield* b.get("/console/workspace")
      yield* b.post("/console/workspace", { csrf: csrfOf(chooser), tenantId: globex! })
      expect((yield* b.get("/console/tokens")).status).toBe(200)
      yield* setSsoOnly(max.account.subject, [globex!])
      expect((yield* b.get("/console/tokens")).location).toBe("/console/sign-in")
      // A new password sign-in opens Acme only, with no choice to make.
      const again = browser()
      expect((yield* again.signIn("max@both.test", max.password)).location).toBe("/console/tokens")
      const session = (yield* world).sessions.get(sessionIdHash(again.jar.get(SessionCookie)!))
      expect([session?.tenantId, session?.ssoTenantId]).toEqual([acme, null])
      // Vera's only workspace requires it: the page says where to go, and no session is opened.
      yield* setSsoOnly(vera.account.subject, [vera.account.memberships[0]!.tenantId])
      const refused = yield* browser().signIn("vera@acme.test", vera.password)
      expect(refused.status).toBe(403)
      expect(refused.html).toContain("Your workspace acme signs you in through your company&#39;s identity provider")
      expect(refused.setCookies.some((c) => c.startsWith(`${SessionCookie}=`))).toBe(false)
      yield* setSsoOnly(max.account.subject, [])
      yield* setSsoOnly(vera.account.subject, [])
    }))

  it.effect("ends a session idle too long, or whose member was removed, and sign-out ends it for good", () =>
    Effect.gen(function*() {
      const ref = yield* MemoryWorld
      const idle = browser()
      yield* idle.signIn("bob@acme.test", bob.password)
      const idleHash = sessionIdHash(idle.jar.get(SessionCookie)!)
      yield* Ref.update(ref, (w) => {
        const s = w.sessions.get(idleHash)!
        w.sessions.set(idleHash, { ...s, lastSeenAtMs: s.lastSeenAtMs - 31 * 60_000 })
        return w
      })
      expect((yield* idle.get("/console/tokens")).location).toBe("/console/sign-in")
      expect((yield* world).sessions.has(idleHash)).toBe(false)

      const removed = browser()
      yield* removed.signIn("bob@acme.test", bob.password)
      expect((yield* removed.get("/console/tokens")).status).toBe(200)
      const bobNow = (yield* world).people.find((p) => p.account.subject === "sub-bob")!
      const memberships = bobNow.account.memberships
      ;(bobNow.account as { memberships: unknown }).memberships = []
      expect((yield* removed.get("/console/tokens")).location).toBe("/console/sign-in")
      ;(bobNow.account as { memberships: unknown }).memberships = memberships

      const leaving = browser()
      yield* leaving.signIn("bob@acme.test", bob.password)
      const page = yield* leaving.get("/console/tokens")
      const cookie = leaving.jar.get(SessionCookie)!
      const out = yield* leaving.post("/console/sign-out", { csrf: csrfOf(page) })
      expect(out.location).toBe("/console/sign-in")
      expect((yield* world).sessions.has(sessionIdHash(cookie))).toBe(false)
      // The old cookie, replayed, is nobody's.
      leaving.jar.set(SessionCookie, cookie)
      expect((yield* leaving.get("/console/tokens")).location).toBe("/console/sign-in")
      expect((yield* actions).at(-1)).toBe("sign_out")
    }))

  it.effect("ends a session opened before the account's password was last set, at its next page; one opened after it stays", () =>
    Effect.gen(function*() {
      const ref = yield* MemoryWorld
      const setPasswordAt = (atMs: number | null) =>
        Ref.update(ref, (w) => {
          const person = w.people.find((p) => p.account.subject === vera.account.subject)!
          ;(person.account as { passwordSetAtMs: number | null }).passwordSetAtMs = atMs
          return w
        })
      const before = browser()
      yield* before.signIn("vera@acme.test", vera.password)
      expect((yield* before.get("/console/tokens")).status).toBe(200)
      const hash = sessionIdHash(before.jar.get(SessionCookie)!)
      const opened = (yield* world).sessions.get(hash)!.createdAtMs
      // The password set again after the sign-in (a change, or a reset): whoever held it loses the console.
      yield* setPasswordAt(opened + 1)
      expect((yield* before.get("/console/tokens")).location).toBe("/console/sign-in")
      expect((yield* world).sessions.has(hash)).toBe(false)
      const after = browser()
      yield* after.signIn("vera@acme.test", vera.password)
      expect((yield* after.get("/console/tokens")).status).toBe(200)
      // Provisioning's clock a minute ahead of the console's: a sign-in right after the password was
      // set is not taken for a session older than it.
      yield* setPasswordAt(Date.now() + 60_000)
      const ahead = browser()
      yield* ahead.signIn("vera@acme.test", vera.password)
      expect((yield* ahead.get("/console/tokens")).status).toBe(200)
      yield* setPasswordAt(null)
    }))

  it.effect("answers an outage of provisioning with a page that says so and locks nobody out", () =>
    Effect.gen(function*() {
      const ref = yield* MemoryWorld
      yield* Ref.update(ref, (w) => ({ ...w, directoryDown: true }))
      for (let i = 0; i < 6; i++) {
        const page = yield* browser().signIn("vera@acme.test", "whatever she typed here")
        expect(page.status).toBe(503)
        expect(page.html).toContain("We cannot sign you in right now.")
        expect(page.html).not.toMatch(/at .*\.ts:\d+/)
      }
      yield* Ref.update(ref, (w) => ({ ...w, directoryDown: false }))
      expect((yield* world).attempts.filter((a) => a.emailKey === "vera@acme.test")).toEqual([])
    }))
})

layer(consoleServer(everyone(), { consoleUrl: new URL("https://portfolio.example.com/console") }), { timeout: 30_000, excludeTestServices: true })(
  "console sign-in over https",
  (it) => {
    it.effect("marks the session cookie Secure and takes forms from the console's https origin only", () =>
      Effect.gen(function*() {
        const b = browser("https://portfolio.example.com")
        const signedIn = yield* b.signIn("bob@acme.test", bob.password)
        expect(signedIn.status).toBe(303)
        expect(signedIn.setCookies.find((c) => c.startsWith(`${SessionCookie}=`))).toMatch(/Secure/i)
        const http = browser("http://portfolio.example.com")
        expect((yield* http.signIn("bob@acme.test", bob.password)).status).toBe(403)
      }))
  }
)
