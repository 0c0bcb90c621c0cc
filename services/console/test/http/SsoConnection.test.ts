import { expect, layer } from "@effect/vitest"
import { Effect, Redacted, Ref } from "effect"
import { MemoryWorld } from "../support/Memory.js"
import { Acme, alice, bob, everyone, gina, Globex } from "../support/People.js"
import { consoleServer, csrfOf, signedIn } from "../support/TestServer.js"

const world = Effect.flatMap(MemoryWorld, Ref.get)
const secret = "the-client-secret-0f-acme-7c1e"

/** The form as an admin fills it in a browser. */
const filled = (overrides: Record<string, string> = {}): Record<string, string> => ({
  issuer: "https://login.acme.test",
  clientId: "portfolio-console",
  clientSecret: secret,
  domains: "Acme.test, ACME-labs.test",
  defaultRole: "contributor",
  roleClaim: "groups",
  // A browser sends a textarea's lines with CR LF; a directory group holds '=' itself.
  roleMap: "EA Team=architect\r\n\r\nCN=Portfolio Admins,OU=Groups = tenant-admin\r\n",
  required: "on",
  breakGlass: "alice@acme.test",
  ...overrides
})

const ssoCallsOf = (email: string) => Effect.map(world, (w) => w.memberCalls.filter((c) => c.op.startsWith("sso-") && c.actor.email === email))

layer(consoleServer(everyone()), { timeout: 30_000, excludeTestServices: true })("console single sign-on page", (it) => {
  it.effect("a tenant-admin sees the redirect URI to register, sets the connection, sees it without its secret, and disables it; each recorded", () =>
    Effect.gen(function*() {
      const admin = yield* signedIn("alice@acme.test", alice.password)
      const empty = yield* admin.get("/console/admin/sso")
      expect(empty.status).toBe(200)
      expect(empty.headers["cache-control"]).toBe("no-store")
      expect(empty.headers["content-security-policy"]).toContain("form-action 'self'")
      expect(empty.html).toContain("No single sign-on connection")
      // Before any connection: the address the provider's client must be registered with.
      expect(empty.html).toContain('value="http://console.test/console/sso/acme/callback"')
      expect(empty.html).toContain('<a href="/console/admin/sso">Single sign-on</a>')
      expect(empty.html).toMatch(/<input id="clientSecret" name="clientSecret" type="password" required [^>]*>/)
      const csrf = csrfOf(empty)

      const saved = yield* admin.post("/console/admin/sso", { csrf, ...filled() })
      expect(saved.status).toBe(303)
      expect(saved.location).toBe("/console/admin/sso?notice=saved")
      const asked = (yield* world).ssoRequests.at(-1)!
      expect(asked.actor).toEqual({ tenantId: Acme.tenantId, userSub: "sub-alice", email: "alice@acme.test", role: "tenant-admin" })
      const { clientSecret, ...request } = asked.request
      expect(Redacted.value(clientSecret)).toBe(secret)
      expect(request).toEqual({
        issuer: "https://login.acme.test",
        clientId: "portfolio-console",
        domains: ["acme.test", "acme-labs.test"],
        defaultRole: "contributor",
        roleClaim: "groups",
        roleMap: [{ value: "EA Team", role: "architect" }, { value: "CN=Portfolio Admins,OU=Groups", role: "tenant-admin" }],
        required: true,
        breakGlass: ["alice@acme.test"],
        emailVerifiedClaim: "email_verified"
      })

      const page = yield* admin.get("/console/admin/sso?notice=saved")
      expect(page.status).toBe(200)
      expect(page.html).toContain("Saved: the next sign-in through the provider uses this connection.")
      expect(page.html).toContain('value="http://console.test/console/sso/acme/callback"')
      expect(page.html).toContain("<code>https://login.acme.test</code>")
      expect(page.html).toContain("<code>portfolio-console</code>")
      expect(page.html).toMatch(/Client secret<\/th><td>set \d{4}-\d\d-\d\d \d\d:\d\d UTC, never shown/)
      expect(page.html).toContain("<code>CN=Portfolio Admins,OU=Groups</code> gives tenant-admin")
      expect(page.html).toContain("yes: members sign in through the provider only")
      // The form starts from the connection as it is, the secret to be typed again.
      expect(page.html).toContain('value="acme.test, acme-labs.test"')
      expect(page.html).toContain("EA Team=architect\nCN=Portfolio Admins,OU=Groups=tenant-admin</textarea>")
      expect(page.html).toContain('name="required" value="on" style="width:auto" checked')
      expect(page.html).not.toContain(secret)

      // Unticked, the checkbox is not sent: the connection is not required.
      expect((yield* admin.post("/console/admin/sso", { csrf, ...filled({ roleClaim: "", roleMap: "", breakGlass: "" }), required: "" })).status).toBe(303)
      const { required: _, ...unticked } = filled()
      expect((yield* admin.post("/console/admin/sso", { csrf, ...unticked, roleClaim: "", roleMap: "", breakGlass: "" })).status).toBe(303)
      expect((yield* world).ssoRequests.at(-1)!.request).toMatchObject({ required: false, roleClaim: null, roleMap: [], breakGlass: [] })
      expect((yield* admin.get("/console/admin/sso")).html).toContain("no: members may still sign in with a password")

      const disabled = yield* admin.post("/console/admin/sso/disable", { csrf })
      expect(disabled.location).toBe("/console/admin/sso?notice=disabled")
      expect((yield* world).ssoConnections.has(Acme.tenantId)).toBe(false)
      const after = yield* admin.get("/console/admin/sso?notice=disabled")
      expect(after.html).toContain("Single sign-on is disabled")
      expect(after.html).toContain("No single sign-on connection")
      // Nothing to disable: provisioning's 404, in its words.
      const again = yield* admin.post("/console/admin/sso/disable", { csrf })
      expect(again.status).toBe(404)
      expect(again.html).toContain("The tenant &#39;acme&#39; has no single sign-on connection.")

      const log = (yield* world).events.filter((e) => e.action.startsWith("sso_connection"))
      expect(log.map((e) => [e.tenantId, e.action, e.actorSub, e.actorEmail, e.target])).toEqual([
        [Acme.tenantId, "sso_connection_set", "sub-alice", "alice@acme.test", null],
        [Acme.tenantId, "sso_connection_set", "sub-alice", "alice@acme.test", null],
        [Acme.tenantId, "sso_connection_set", "sub-alice", "alice@acme.test", null],
        [Acme.tenantId, "sso_connection_disabled", "sub-alice", "alice@acme.test", null]
      ])
      expect(log[0]!.detail).toEqual({ issuer: "https://login.acme.test", clientId: "portfolio-console", domains: "acme.test,acme-labs.test", required: "true" })
      expect(log[3]!.detail).toEqual({})
      expect(JSON.stringify((yield* world).events)).not.toContain(secret)
      expect((yield* admin.get("/console/admin/security")).html).toContain("sso_connection_disabled")
    }))

  it.effect("shows what is wrong, provisioning's words or the console's own, with the form filled again but for the secret; nothing saved or recorded", () =>
    Effect.gen(function*() {
      const admin = yield* signedIn("gina@globex.test", gina.password)
      const csrf = csrfOf(yield* admin.get("/console/admin/sso"))
      const asked = Effect.map(world, (w) => w.ssoRequests.length)
      const before = yield* asked

      const refused = yield* admin.post("/console/admin/sso", { csrf, ...filled({ issuer: "https://unreachable.test", breakGlass: "gina@globex.test" }) })
      expect(refused.status).toBe(400)
      expect(refused.html).toContain("The issuer cannot be used: its discovery document could not be reached (ENOTFOUND).")
      expect(refused.html).toContain('value="https://unreachable.test"')
      expect(refused.html).toContain('value="Acme.test, ACME-labs.test"')
      expect(refused.html).toContain("EA Team=architect\r\n\r\nCN=Portfolio Admins,OU=Groups = tenant-admin\r\n</textarea>")
      expect(refused.html).toContain('<option value="contributor" selected>')
      expect(refused.html).toContain('name="required" value="on" style="width:auto" checked')
      expect(refused.html).toContain('value="gina@globex.test"')
      expect(refused.html).not.toContain(secret)
      expect(yield* asked).toBe(before + 1)

      // What the console tells alone, before asking provisioning.
      const local: ReadonlyArray<readonly [Record<string, string>, string]> = [
        [{ clientSecret: "" }, "Give the client secret: it is asked at every save, since it is never shown again."],
        [{ clientSecret: "   " }, "Give the client secret"],
        [{ issuer: "" }, "Give the issuer"],
        [{ clientId: "" }, "Give the client id"],
        [{ domains: " , " }, "Give at least one e-mail domain"],
        [{ domains: "globex.test, <script>alert(1)</script>" }, "&#39;&lt;script&gt;alert(1)&lt;/script&gt;&#39; is not an e-mail domain such as example.com."],
        [{ defaultRole: "owner" }, "The default role is one of tenant-admin, architect, "],
        [{ roleMap: "EA Team=architect\nadmins" }, "Line 2 of the role map is not value=role."],
        [{ roleMap: "=architect" }, "Line 1 of the role map is not value=role."],
        [{ roleMap: "EA Team=owner" }, "Line 1 of the role map: &#39;owner&#39; is not a role (tenant-admin, architect, "],
        [{ roleClaim: "the groups" }, "The role claim is the name of a claim of the id token"],
        [{ breakGlass: "gina@globex.test, gina" }, "&#39;gina&#39; is not an e-mail address."],
        [{ clientSecret: "x".repeat(1025) }, "The client secret is at most 1,024 characters."],
        [{ clientSecret: "a\u0000b" }, "The client secret cannot be accepted"]
      ]
      for (const [overrides, message] of local) {
        const answer = yield* admin.post("/console/admin/sso", { csrf, ...filled(overrides) })
        expect(answer.status, JSON.stringify(overrides)).toBe(400)
        expect(answer.html, JSON.stringify(overrides)).toContain(message)
        expect(answer.html).not.toContain("<script>alert")
        expect(answer.html).not.toContain(overrides["clientSecret"] || secret)
      }
      expect(yield* asked).toBe(before + 1)
      expect((yield* world).ssoConnections.has(Globex.tenantId)).toBe(false)
      expect((yield* world).events.filter((e) => e.tenantId === Globex.tenantId && e.action.startsWith("sso_connection"))).toEqual([])
    }))

  it.effect("keeps other members out: the 403 page, no link, and provisioning never asked", () =>
    Effect.gen(function*() {
      const member = yield* signedIn("bob@acme.test", bob.password)
      const tokens = yield* member.get("/console/tokens")
      expect(tokens.html).not.toContain("/console/admin/sso")
      const csrf = csrfOf(tokens)
      expect((yield* member.get("/console/admin/sso")).status).toBe(403)
      expect((yield* member.post("/console/admin/sso", { csrf, ...filled() })).status).toBe(403)
      expect((yield* member.post("/console/admin/sso/disable", { csrf })).status).toBe(403)
      expect(yield* ssoCallsOf("bob@acme.test")).toEqual([])
    }))

  it.effect("refuses a form not sent from the console's page (a wrong token, another origin), and records the attempt", () =>
    Effect.gen(function*() {
      const admin = yield* signedIn("alice@acme.test", alice.password)
      const csrf = csrfOf(yield* admin.get("/console/admin/sso"))
      const asked = (yield* world).ssoRequests.length
      for (const [path, form, origin] of [
        ["/console/admin/sso", { csrf: "forged", ...filled() }, undefined],
        ["/console/admin/sso", { ...filled() }, undefined],
        ["/console/admin/sso", { csrf, ...filled() }, "https://evil.test"],
        ["/console/admin/sso/disable", { csrf: "forged" }, undefined],
        ["/console/admin/sso/disable", { csrf }, "https://evil.test"]
      ] as const) {
        const answer = yield* admin.post(path, form, origin === undefined ? {} : { origin })
        expect(answer.status, `${path} ${origin}`).toBe(403)
        expect(answer.html).toContain("This form cannot be accepted")
        expect(answer.html).not.toContain(secret)
      }
      expect((yield* world).ssoRequests.length).toBe(asked)
      const refusals = (yield* world).events.filter((e) => e.action === "csrf_refused" && e.tenantId === Acme.tenantId && String(e.detail["path"]).startsWith("/console/admin/sso"))
      expect(refusals).toHaveLength(5)
    }))
})
