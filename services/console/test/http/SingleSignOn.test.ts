import { expect, layer } from "@effect/vitest"
import { Effect, Ref } from "effect"
import { sessionIdHash } from "../../src/domain/SessionRules.js"
import { SsoStateCookie } from "../../src/adapters/http/Guards.js"
import { MemoryWorld, type SsoOutcome } from "../support/Memory.js"
import { Acme, alice, bob, everyone, Globex, max } from "../support/People.js"
import { browser, consoleServer, csrfOf, type Page, SessionCookie, SignInCookie } from "../support/TestServer.js"

const world = Effect.flatMap(MemoryWorld, Ref.get)
const change = (f: (w: import("../support/Memory.js").World) => void) => Effect.flatMap(MemoryWorld, (ref) => Ref.update(ref, (w) => (f(w), w)))

/** Acme has a connection to its provider; Globex has none. */
const connectAcme = change((w) => void (w.ssoTenants = ["acme"]))

const cookieLine = (page: Page, name: string) => page.setCookies.find((c) => c.startsWith(`${name}=`))
/** Whether the answer expires the state cookie, on the path it was set with. */
const clearsState = (page: Page, slug = "acme") => {
  const line = cookieLine(page, SsoStateCookie)
  return line !== undefined && /Max-Age=0/i.test(line) && line.includes(`Path=/console/sso/${slug}/`)
}

/** The code the provider gives this browser, as the test decides what it comes to. */
const providerCode = (outcome: SsoOutcome) =>
  Effect.gen(function*() {
    const code = `code-${crypto.randomUUID()}`
    yield* change((w) => void w.ssoCodes.set(code, outcome))
    return code
  })

/** A browser that began a sign-in through Acme's provider: the state it holds, and the callback's query from the provider. */
const begun = (headers: Readonly<Record<string, string>> = {}) =>
  Effect.gen(function*() {
    const b = browser("http://console.test", headers)
    const start = yield* b.get("/console/sso/acme")
    expect(start.status).toBe(302)
    const state = b.jar.get(SsoStateCookie)!
    const callback = (query: Record<string, string>) => b.get(`/console/sso/acme/callback?${new URLSearchParams(query)}`)
    return { b, start, state, callback }
  })

const refusalsSince = (before: number) => Effect.map(world, (w) => w.events.slice(before).filter((e) => e.action === "sso_sign_in_refused"))

const GenericRefusal = "The sign-in with your company&#39;s provider did not succeed. Try again."

layer(consoleServer(everyone()), { timeout: 30_000, excludeTestServices: true })("console sign-in through the tenant's provider", (it) => {
  it.effect("offers the workspace form on the sign-in page, under the same policy, beside the password form", () =>
    Effect.gen(function*() {
      const page = yield* browser().get("/console/sign-in")
      expect(page.status).toBe(200)
      expect(page.html).toContain(`<form method="get" action="/console/sso">`)
      expect(page.html).toContain(`name="tenant"`)
      expect(page.html).toContain("Sign in with your company's identity provider")
      expect(page.headers["content-security-policy"]).toContain("form-action 'self'")
    }))

  it.effect("takes the workspace's name to its provider's sign-in by a navigation of its own, and refuses what is no slug", () =>
    Effect.gen(function*() {
      const before = (yield* world).ssoStates.length
      const go = yield* browser().get("/console/sso?tenant=%20Acme%20")
      expect(go.status).toBe(200)
      // Not a redirect: the form page's `form-action 'self'` would block the provider's origin two hops on.
      expect(go.html).toContain(`<meta http-equiv="refresh" content="0; url=/console/sso/acme">`)
      expect(go.html).toContain(`<a href="/console/sso/acme">Continue</a>`)
      for (const typed of ["acme corp", "../admin", "-acme", "a".repeat(41), "acme%00", ""]) {
        const page = yield* browser().get(`/console/sso?tenant=${encodeURIComponent(typed)}`)
        expect(page.status, typed).toBe(400)
        expect(page.html, typed).toContain("or the workspace&#39;s name: 1 to 40 lowercase letters")
        // The sign-in page whole, its password form usable.
        expect(cookieLine(page, SignInCookie), typed).toBeDefined()
      }
      const tag = yield* browser().get(`/console/sso?tenant=${encodeURIComponent(`"><script>x</script>`)}`)
      expect(tag.status).toBe(400)
      expect(tag.html).not.toContain("<script>x")
      expect((yield* browser().get("/console/sso")).status).toBe(400)
      // Nothing was asked of provisioning.
      expect((yield* world).ssoStates.length).toBe(before)
    }))

  it.effect("takes a work e-mail to the provider of the one workspace that signs in its domain, lets the person pick among several, and says when none does", () =>
    Effect.gen(function*() {
      yield* connectAcme
      const one = yield* browser().get(`/console/sso?tenant=${encodeURIComponent(" Dana@ACME.test ")}`)
      expect(one.status).toBe(200)
      expect(one.html).toContain(`<meta http-equiv="refresh" content="0; url=/console/sso/acme">`)
      const none = yield* browser().get(`/console/sso?tenant=${encodeURIComponent("dana@elsewhere.test")}`)
      expect(none.status).toBe(404)
      expect(none.html).toContain("No workspace signs in the people of this e-mail&#39;s domain")
      expect(none.html).toContain(`value="dana@elsewhere.test"`)
      yield* change((w) => void (w.ssoTenants = ["globex", "acme"]))
      const several = yield* browser().get(`/console/sso?tenant=${encodeURIComponent("dana@shared.test")}`)
      expect(several.status).toBe(200)
      expect(several.html).toContain(`<li><a href="/console/sso/acme">acme</a></li><li><a href="/console/sso/globex">globex</a></li>`)
    }))

  it.effect("begins: binds provisioning's state to the browser in a Lax cookie of the workspace's callback path, and sends it to the provider", () =>
    Effect.gen(function*() {
      yield* connectAcme
      const { b, start, state } = yield* begun()
      const issued = (yield* world).ssoStates.at(-1)!
      expect(issued).toMatchObject({ slug: "acme", state, used: false })
      expect(start.location).toBe(`https://idp.test/authorize?client_id=portfolio&state=${state}&redirect_uri=${encodeURIComponent("http://console.test/console/sso/acme/callback")}`)
      expect(start.headers["cache-control"]).toBe("no-store")
      const cookie = cookieLine(start, SsoStateCookie)!
      expect(cookie).toMatch(/HttpOnly/i)
      expect(cookie).toMatch(/SameSite=Lax/i)
      expect(cookie).toContain("Path=/console/sso/acme/")
      expect(cookie).toMatch(/Max-Age=600/i)
      expect(cookie).not.toMatch(/Secure/i)
      // No session: nobody is signed in yet.
      expect(b.jar.has(SessionCookie)).toBe(false)
    }))

  it.effect("answers an unknown workspace and one without a connection alike, and a provisioning that is down with 503", () =>
    Effect.gen(function*() {
      yield* connectAcme
      const unknown = yield* browser().get("/console/sso/nowhere")
      const without = yield* browser().get("/console/sso/globex")
      for (const page of [unknown, without]) {
        expect(page.status).toBe(404)
        expect(page.html).toContain("There is no sign-in through a company identity provider for that workspace.")
        expect(cookieLine(page, SsoStateCookie)).toBeUndefined()
      }
      // A path that is no slug is no page.
      const malformed = yield* browser().get("/console/sso/Acme")
      expect(malformed.status).toBe(404)
      expect(malformed.html).toContain("Page not found")
      yield* change((w) => void (w.directoryDown = true))
      const down = yield* browser().get("/console/sso/acme")
      yield* change((w) => void (w.directoryDown = false))
      expect(down.status).toBe(503)
      expect(down.html).toContain("We cannot sign you in with your company&#39;s provider right now.")
      expect(cookieLine(down, SsoStateCookie)).toBeUndefined()
    }))

  it.effect("signs in on the provider's callback: a new session as the password opens, `sign_in` by sso, the callback URL on CONSOLE_URL", () =>
    Effect.gen(function*() {
      yield* connectAcme
      // The Host header is the client's to write: the URL given to provisioning is built on CONSOLE_URL.
      const { b, callback, state } = yield* begun({ host: "evil.test", "x-forwarded-host": "evil.test" })
      b.jar.set(SessionCookie, "planted-by-someone-else")
      const code = yield* providerCode({ _tag: "SignsIn", subject: bob.account.subject })
      const before = (yield* world).events.length
      const back = yield* callback({ code, state, iss: "https://idp.test" })
      expect(back.status).toBe(303)
      expect(back.location).toBe("/console/tokens")
      expect(back.headers["referrer-policy"]).toBe("no-referrer")
      expect((yield* world).ssoCompletions.at(-1)).toEqual({
        slug: "acme",
        state,
        callbackUrl: `http://console.test/console/sso/acme/callback?${new URLSearchParams({ code, state, iss: "https://idp.test" })}`
      })
      const cookie = cookieLine(back, SessionCookie)!
      expect(cookie).toMatch(/HttpOnly/i)
      expect(cookie).toMatch(/SameSite=Lax/i)
      expect(cookie).toMatch(/Path=\/console(;|$)/i)
      const sessionId = b.jar.get(SessionCookie)!
      expect(sessionId).not.toBe("planted-by-someone-else")
      const session = (yield* world).sessions.get(sessionIdHash(sessionId))!
      expect(session).toMatchObject({ userSub: bob.account.subject, email: "bob@acme.test", tenantId: Acme.tenantId })
      expect(session.createdAtMs).toBe(session.lastSeenAtMs)
      expect(clearsState(back)).toBe(true)
      expect(b.jar.has(SsoStateCookie)).toBe(false)
      const signIns = (yield* world).events.slice(before)
      expect(signIns.map((e) => [e.action, e.tenantId, e.actorSub, e.actorEmail, e.detail])).toEqual([
        ["sign_in", Acme.tenantId, bob.account.subject, "bob@acme.test", { method: "sso" }]
      ])
      const tokens = yield* b.get("/console/tokens")
      expect(tokens.status).toBe(200)
      expect(tokens.html).toContain("bob@acme.test (architect)")

      // The same callback again, its state bound to the browser once more: provisioning's state is spent.
      b.jar.set(SsoStateCookie, state)
      const replayed = yield* callback({ code, state, iss: "https://idp.test" })
      expect(replayed.status).toBe(401)
      expect((yield* refusalsSince(before)).map((e) => e.detail)).toEqual([{ reason: "unknown, expired or used state" }])
    }))

  it.effect("opens a member of several workspaces into the provider's tenant only: that provider vouches for no other", () =>
    Effect.gen(function*() {
      yield* connectAcme
      const { b, callback, state } = yield* begun()
      const before = (yield* world).events.length
      const back = yield* callback({ code: yield* providerCode({ _tag: "SignsIn", subject: max.account.subject }), state })
      expect(back.location).toBe("/console/tokens")
      const session = (yield* world).sessions.get(sessionIdHash(b.jar.get(SessionCookie)!))
      expect([session?.tenantId, session?.ssoTenantId]).toEqual([Acme.tenantId, Acme.tenantId])
      const filed = (yield* world).events.slice(before)
      expect(filed.map((e) => [e.action, e.tenantId, e.detail])).toEqual([["sign_in", Acme.tenantId, { method: "sso" }]])
      // Globex is not taken when asked for.
      const tokens = yield* b.get("/console/tokens")
      expect(tokens.status).toBe(200)
      yield* b.post("/console/workspace", { csrf: csrfOf(tokens), tenantId: Globex.tenantId })
      expect((yield* world).sessions.get(sessionIdHash(b.jar.get(SessionCookie)!))?.tenantId).toBe(Acme.tenantId)
    }))

  it.effect("refuses a callback this browser did not begin (no state cookie, another state), under no tenant, without asking provisioning", () =>
    Effect.gen(function*() {
      yield* connectAcme
      const asked = (yield* world).ssoCompletions.length
      const before = (yield* world).events.length
      const code = yield* providerCode({ _tag: "SignsIn", subject: alice.account.subject })
      // Someone else's callback, replayed in this browser (a login forged into it), or one past its 10 minutes.
      const other = yield* begun()
      const noCookie = yield* browser().get(`/console/sso/acme/callback?${new URLSearchParams({ code, state: other.state })}`)
      const mine = yield* begun()
      const otherState = yield* mine.callback({ code, state: other.state })
      const again = yield* begun()
      const noState = yield* again.callback({ code })
      for (const page of [noCookie, otherState, noState]) {
        expect(page.status).toBe(401)
        expect(page.html).toContain(GenericRefusal)
        expect(cookieLine(page, SessionCookie)).toBeUndefined()
        expect(clearsState(page)).toBe(true)
      }
      expect((yield* world).ssoCompletions.length).toBe(asked)
      const refusals = yield* refusalsSince(before)
      expect(refusals.map((e) => [e.tenantId, e.target, e.actorSub, e.detail["reason"]])).toEqual([
        [null, "acme", null, "no sign-in was begun in this browser, or it began over 10 minutes ago"],
        [null, "acme", null, "the state is not the one this browser was given"],
        [null, "acme", null, "the state is not the one this browser was given"]
      ])
      expect(mine.b.jar.has(SessionCookie)).toBe(false)
    }))

  it.effect("refuses the provider's error answer, filed in the tenant's log with the error, without asking provisioning", () =>
    Effect.gen(function*() {
      yield* connectAcme
      const asked = (yield* world).ssoCompletions.length
      const before = (yield* world).events.length
      const { callback, state } = yield* begun()
      const denied = yield* callback({ error: "access_denied", error_description: "The user said no", state })
      expect(denied.status).toBe(401)
      expect(denied.html).toContain(GenericRefusal)
      expect(clearsState(denied)).toBe(true)
      const odd = yield* begun()
      yield* odd.callback({ error: "\u001b[31m\"quoted\"", state: odd.state })
      expect((yield* world).ssoCompletions.length).toBe(asked)
      expect((yield* refusalsSince(before)).map((e) => [e.tenantId, e.detail])).toEqual([
        [Acme.tenantId, { reason: "provider answered access_denied" }],
        [Acme.tenantId, { reason: "provider answered an error that is no OAuth error code" }]
      ])
    }))

  it.effect("files provisioning's refusal with its reason, and shows only the generic page", () =>
    Effect.gen(function*() {
      yield* connectAcme
      const before = (yield* world).events.length
      const { b, callback, state } = yield* begun()
      const code = yield* providerCode({ _tag: "Refused", reason: "the e-mail vera@acme.test is not verified by the provider" })
      const page = yield* callback({ code, state })
      expect(page.status).toBe(401)
      expect(page.html).toContain(GenericRefusal)
      expect(page.html).not.toContain("verified")
      expect(clearsState(page)).toBe(true)
      expect(b.jar.has(SessionCookie)).toBe(false)
      const refusals = yield* refusalsSince(before)
      expect(refusals.map((e) => [e.tenantId, e.target, e.detail])).toEqual([
        [Acme.tenantId, "acme", { reason: "the e-mail vera@acme.test is not verified by the provider" }]
      ])
      expect((yield* world).events.slice(before).some((e) => e.action === "sign_in")).toBe(false)
    }))

  it.effect("tells a removed member they need a new invitation, and files the attempt", () =>
    Effect.gen(function*() {
      yield* connectAcme
      const before = (yield* world).events.length
      const { b, callback, state } = yield* begun()
      const page = yield* callback({ code: yield* providerCode({ _tag: "Removed", reason: "rita@acme.test was removed from acme" }), state })
      expect(page.status).toBe(403)
      expect(page.html).toContain("You were removed from this workspace: ask one of its tenant-admins for a new invitation.")
      expect(clearsState(page)).toBe(true)
      expect(b.jar.has(SessionCookie)).toBe(false)
      expect((yield* refusalsSince(before)).map((e) => [e.tenantId, e.detail])).toEqual([[Acme.tenantId, { reason: "rita@acme.test was removed from acme" }]])
    }))

  it.effect("answers 503 when provisioning cannot finish, the state cookie cleared, nothing filed", () =>
    Effect.gen(function*() {
      yield* connectAcme
      const before = (yield* world).events.length
      const { callback, state } = yield* begun()
      const code = yield* providerCode({ _tag: "SignsIn", subject: bob.account.subject })
      yield* change((w) => void (w.directoryDown = true))
      const page = yield* callback({ code, state })
      yield* change((w) => void (w.directoryDown = false))
      expect(page.status).toBe(503)
      expect(page.html).toContain("We cannot sign you in with your company&#39;s provider right now.")
      expect(clearsState(page)).toBe(true)
      expect((yield* world).events.length).toBe(before)
    }))
})

layer(consoleServer(everyone(), { consoleUrl: new URL("https://portfolio.example.com/console") }), { timeout: 30_000, excludeTestServices: true })(
  "console sign-in through the tenant's provider over https",
  (it) => {
    it.effect("marks the state cookie Secure, and gives provisioning the callback URL on the https origin", () =>
      Effect.gen(function*() {
        yield* connectAcme
        const b = browser("https://portfolio.example.com")
        const start = yield* b.get("/console/sso/acme")
        expect(cookieLine(start, SsoStateCookie)).toMatch(/Secure/i)
        const state = b.jar.get(SsoStateCookie)!
        const code = yield* providerCode({ _tag: "SignsIn", subject: bob.account.subject })
        const back = yield* b.get(`/console/sso/acme/callback?code=${code}&state=${state}`)
        expect(back.status).toBe(303)
        expect(cookieLine(back, SessionCookie)).toMatch(/Secure/i)
        expect((yield* world).ssoCompletions.at(-1)?.callbackUrl).toBe(`https://portfolio.example.com/console/sso/acme/callback?code=${code}&state=${state}`)
      }))
  }
)
