import { expect, layer } from "@effect/vitest"
import { PageCursorMaxLength, PatRequest } from "@portfolio/domain"
import { DateTime, Effect, Ref } from "effect"
import { randomUUID } from "node:crypto"
import { MemoryWorld } from "../support/Memory.js"
import { Acme, alice, bob, everyone, gina, vera } from "../support/People.js"
import { consoleServer, csrfOf, signedIn } from "../support/TestServer.js"

const world = Effect.flatMap(MemoryWorld, Ref.get)
const justification = "The CI pipeline of billing reads the application list nightly."

layer(consoleServer(everyone()), { timeout: 30_000, excludeTestServices: true })("console token pages", (it) => {
  it.effect("a member requests a token, an admin approves it and sees it once, the member sees and revokes it; each step recorded", () =>
    Effect.gen(function*() {
      const member = yield* signedIn("bob@acme.test", bob.password)
      const form = yield* member.get("/console/tokens/new")
      expect(form.html).toContain('<option value="write">write</option>')
      const filed = yield* member.post("/console/tokens/new", { csrf: csrfOf(form), scope: "write", days: "30", justification })
      expect(filed.location).toBe("/console/tokens?notice=requested")
      const mine = yield* member.get(filed.location!)
      expect(mine.html).toContain("Your request is filed.")
      expect(mine.html).toContain(justification)
      expect(mine.html).toMatch(/<td>pending until [^<]+<\/td>/)
      const request = (yield* world).requests.at(-1)!
      // The console vouched for the member as provisioning holds them.
      expect(request).toMatchObject({ tenantId: Acme.tenantId, userSub: "sub-bob", email: "bob@acme.test", role: "architect", scope: "write", days: 30 })

      const admin = yield* signedIn("alice@acme.test", alice.password)
      const pending = yield* admin.get("/console/admin/requests")
      expect(pending.html).toContain(`data-request="${request.id}"`)
      const approved = yield* admin.post(`/console/admin/requests/${request.id}/approve`, { csrf: csrfOf(pending) })
      expect(approved.status).toBe(200)
      expect(approved.headers["cache-control"]).toBe("no-store")
      const token = (yield* world).requests.find((r) => r.id === request.id)!
      expect(token.status).toBe("approved")
      const pat = /id="token" class="token" readonly value="([^"]+)"/.exec(approved.html)?.[1]
      expect(pat).toMatch(/^pat_test_/)
      expect(approved.html).toContain("This token is shown once, now.")
      expect(approved.html).toContain("through a secure channel")
      expect(approved.html).toContain('data-copy="token"')
      // Shown once: a second approval mints nothing and the page never shows it again.
      const again = yield* admin.post(`/console/admin/requests/${request.id}/approve`, { csrf: csrfOf(pending) })
      expect(again.status).toBe(409)
      expect(again.html).not.toContain(pat!)
      expect((yield* world).pats).toHaveLength(1)

      const tokens = yield* member.get("/console/tokens")
      expect(tokens.html).toContain("<code>pat_test_a</code>")
      expect(tokens.html).toContain("approved by alice@acme.test")
      expect(tokens.html).not.toContain(pat!)
      const patId = (yield* world).pats[0]!.summary.id
      const revoked = yield* member.post(`/console/tokens/${patId}/revoke`, { csrf: csrfOf(tokens) })
      expect(revoked.location).toBe("/console/tokens?notice=revoked")
      expect((yield* member.get("/console/tokens")).html).toContain("You have no active token.")

      const log = (yield* world).events.filter((e) => e.tenantId === Acme.tenantId && e.action.startsWith("pat_"))
      expect(log.map((e) => [e.action, e.actorEmail, e.target])).toEqual([
        ["pat_requested", "bob@acme.test", request.id],
        ["pat_request_approved", "alice@acme.test", request.id],
        ["pat_revoked", "bob@acme.test", patId]
      ])
      const securityPage = yield* admin.get("/console/admin/security")
      expect(securityPage.html).toContain("pat_request_approved")
    }))

  it.effect("keeps a viewer to read tokens, checks the form's rules, and files nothing refused", () =>
    Effect.gen(function*() {
      const viewer = yield* signedIn("vera@acme.test", vera.password)
      const form = yield* viewer.get("/console/tokens/new")
      expect(form.html).not.toContain('value="write"')
      expect(form.html).toContain("your tokens can read only")
      const before = (yield* world).requests.length
      const csrf = csrfOf(form)
      const write = yield* viewer.post("/console/tokens/new", { csrf, scope: "write", days: "30", justification })
      expect(write.status).toBe(400)
      expect(write.html).toContain("may request a read token only")
      const short = yield* viewer.post("/console/tokens/new", { csrf, scope: "read", days: "30", justification: "too short" })
      expect(short.status).toBe(400)
      expect(short.html).toContain("20 to 2000 characters")
      const long = yield* viewer.post("/console/tokens/new", { csrf, scope: "read", days: "367", justification })
      expect(long.status).toBe(400)
      expect(long.html).toContain("1 to 366 days")
      // The refused form comes back with what was typed.
      expect(long.html).toContain(justification)
      expect((yield* world).requests.length).toBe(before)
    }))

  it.effect("gives a non-admin the 403 page on every admin page and form, and asks the gateway nothing for them", () =>
    Effect.gen(function*() {
      const viewer = yield* signedIn("vera@acme.test", vera.password)
      const page = yield* viewer.get("/console/tokens")
      const callsBefore = (yield* world).gatewayCalls.length
      for (const path of ["/console/admin/requests", "/console/admin/security"]) {
        const refused = yield* viewer.get(path)
        expect(refused.status).toBe(403)
        expect(refused.html).toContain("Tenant-admins only")
      }
      const id = "00000000-0000-4000-8000-000000000001"
      expect((yield* viewer.post(`/console/admin/requests/${id}/approve`, { csrf: csrfOf(page) })).status).toBe(403)
      expect((yield* viewer.post(`/console/admin/requests/${id}/deny`, { csrf: csrfOf(page), reason: "no" })).status).toBe(403)
      expect((yield* world).gatewayCalls.length).toBe(callsBefore)
      // Not even a link to them.
      expect(page.html).not.toContain("/console/admin/")
    }))

  it.effect("never lists another tenant's requests, and another tenant's request cannot be decided", () =>
    Effect.gen(function*() {
      const member = yield* signedIn("bob@acme.test", bob.password)
      const form = yield* member.get("/console/tokens/new")
      yield* member.post("/console/tokens/new", { csrf: csrfOf(form), scope: "read", days: "10", justification })
      const acmeRequest = (yield* world).requests.at(-1)!
      const foreignAdmin = yield* signedIn("gina@globex.test", gina.password)
      const pending = yield* foreignAdmin.get("/console/admin/requests")
      expect(pending.html).not.toContain(acmeRequest.id)
      expect(pending.html).not.toContain("bob@acme.test")
      const decided = yield* foreignAdmin.post(`/console/admin/requests/${acmeRequest.id}/approve`, { csrf: csrfOf(pending) })
      expect(decided.status).toBe(404)
      expect((yield* world).requests.find((r) => r.id === acmeRequest.id)!.status).toBe("pending")
      // Every gateway call of this admin named their own tenant.
      expect((yield* world).gatewayCalls.filter((c) => c.actor.email === "gina@globex.test").every((c) => c.actor.tenantId !== Acme.tenantId)).toBe(true)
    }))

  it.effect("refuses a signed-in form with a forged token or from another origin: nothing changes, the attempt is recorded", () =>
    Effect.gen(function*() {
      const member = yield* signedIn("bob@acme.test", bob.password)
      const form = yield* member.get("/console/tokens/new")
      const before = (yield* world).requests.length
      const forged = yield* member.post("/console/tokens/new", { csrf: "forged-token", scope: "read", days: "10", justification })
      expect(forged.status).toBe(403)
      expect(forged.html).toContain("This form cannot be accepted")
      const missing = yield* member.post("/console/tokens/new", { scope: "read", days: "10", justification })
      expect(missing.status).toBe(403)
      const crossSite = yield* member.post("/console/tokens/new", { csrf: csrfOf(form), scope: "read", days: "10", justification }, { origin: "https://evil.test" })
      expect(crossSite.status).toBe(403)
      expect((yield* world).requests.length).toBe(before)
      expect((yield* world).events.slice(-3).map((e) => e.action)).toEqual(["csrf_refused", "csrf_refused", "csrf_refused"])
    }))

  it.effect("lets an admin deny with a reason the requester reads, and not decide their own request", () =>
    Effect.gen(function*() {
      const admin = yield* signedIn("alice@acme.test", alice.password)
      const form = yield* admin.get("/console/tokens/new")
      yield* admin.post("/console/tokens/new", { csrf: csrfOf(form), scope: "write", days: "10", justification })
      const own = (yield* world).requests.at(-1)!
      const pending = yield* admin.get("/console/admin/requests")
      const ownSection = pending.html.slice(pending.html.indexOf(`data-request="${own.id}"`))
      expect(ownSection.slice(0, ownSection.indexOf("</section>"))).toContain("This is your own request")

      const member = yield* signedIn("bob@acme.test", bob.password)
      const memberForm = yield* member.get("/console/tokens/new")
      yield* member.post("/console/tokens/new", { csrf: csrfOf(memberForm), scope: "write", days: "10", justification })
      const theirs = (yield* world).requests.at(-1)!
      const noReason = yield* admin.post(`/console/admin/requests/${theirs.id}/deny`, { csrf: csrfOf(pending), reason: "   " })
      expect(noReason.status).toBe(400)
      const denied = yield* admin.post(`/console/admin/requests/${theirs.id}/deny`, { csrf: csrfOf(pending), reason: "Use the shared CI token" })
      expect(denied.location).toBe("/console/admin/requests?notice=denied")
      expect((yield* member.get("/console/tokens")).html).toContain("denied by alice@acme.test: Use the shared CI token")
    }))
  it.effect("pages a member's requests 50 at a time, newest first, with a link to the older ones; an edited cursor shows the newest", () =>
    Effect.gen(function*() {
      const member = yield* signedIn("gina@globex.test", gina.password)
      const form = yield* member.get("/console/tokens/new")
      for (let i = 0; i < 52; i++) {
        yield* member.post("/console/tokens/new", { csrf: csrfOf(form), scope: "read", days: "7", justification: `${justification} Batch number ${String(i).padStart(2, "0")}.` })
      }
      const batches = (html: string) => [...html.matchAll(/Batch number (\d\d)\./g)].map((m) => Number(m[1]))
      const first = yield* member.get("/console/tokens")
      expect(batches(first.html)).toEqual(Array.from({ length: 50 }, (_, i) => 51 - i))
      const older = /<a href="(\/console\/tokens\?requests=[^"]+)" rel="next">Older requests<\/a>/.exec(first.html)?.[1]
      expect(older).toBeDefined()
      const second = yield* member.get(older!.replace(/&amp;/g, "&"))
      expect(batches(second.html)).toEqual([1, 0])
      expect(second.html).not.toContain("Older requests")
      const edited = yield* member.get("/console/tokens?requests=after%3Anothing")
      expect(edited.html).toContain("That page of requests does not exist; here are the newest.")
      expect(batches(edited.html)).toEqual(batches(first.html))
    }))
})

// A world of its own: 60 requests pending in Acme, filed by 12 members (5 each, the gateway's cap).
layer(consoleServer(everyone()), { timeout: 30_000, excludeTestServices: true })("console admin requests page", (it) => {
  it.effect("pages the tenant's pending requests 50 at a time, newest first, every one reachable through \"Older requests\"; an edited cursor shows the newest", () =>
    Effect.gen(function*() {
      const filedAt = DateTime.makeUnsafe("2026-07-01T00:00:00.000Z")
      const seeded = Array.from({ length: 60 }, (_, i) =>
        PatRequest.make({
          id: randomUUID(),
          tenantId: Acme.tenantId,
          userSub: `sub-flooder-${i % 12}`,
          email: `flooder-${i % 12}@acme.test`,
          role: "architect",
          scope: "read",
          days: 7,
          justification: `${justification} Number ${String(i).padStart(2, "0")}.`,
          status: "pending",
          createdAt: DateTime.add(filedAt, { minutes: i }),
          expiresAt: DateTime.add(filedAt, { days: 30, minutes: i }),
          decidedAt: null,
          decidedBy: null,
          reason: null,
          patId: null
        }))
      yield* Effect.flatMap(MemoryWorld, (ref) => Ref.update(ref, (w) => ({ ...w, requests: [...w.requests, ...seeded] })))
      const shown = (html: string) => [...html.matchAll(/data-request="([^"]+)"/g)].map((m) => m[1]!)
      const olderLink = (html: string) => /<a href="(\/console\/admin\/requests\?cursor=[^"]+)" rel="next">Older requests<\/a>/.exec(html)?.[1]?.replace(/&amp;/g, "&")

      const admin = yield* signedIn("alice@acme.test", alice.password)
      const first = yield* admin.get("/console/admin/requests")
      expect(first.status).toBe(200)
      const newestFirst = [...seeded].reverse().map((r) => r.id)
      expect(shown(first.html)).toEqual(newestFirst.slice(0, 50))
      const older = olderLink(first.html)
      expect(older).toBeDefined()
      const second = yield* admin.get(older!)
      expect(second.status).toBe(200)
      expect(shown(second.html)).toEqual(newestFirst.slice(50))
      expect(olderLink(second.html)).toBeUndefined()
      expect(second.html).not.toContain("Older requests")
      // The second page's forms decide as the first's do.
      const oldest = seeded[0]!
      const denied = yield* admin.post(`/console/admin/requests/${oldest.id}/deny`, { csrf: csrfOf(second), reason: "Filed in bulk." })
      expect(denied.location).toBe("/console/admin/requests?notice=denied")
      expect((yield* world).requests.find((r) => r.id === oldest.id)!.status).toBe("denied")

      const edited = yield* admin.get("/console/admin/requests?cursor=after%3Anothing")
      expect(edited.status).toBe(400)
      expect(edited.html).toContain("That page of requests does not exist; here are the newest.")
      expect(shown(edited.html)).toEqual(shown(first.html))
      // A cursor longer than any the gateway gives is not even asked for: the newest page.
      const tooLong = yield* admin.get(`/console/admin/requests?cursor=${"a".repeat(PageCursorMaxLength + 1)}`)
      expect(tooLong.status).toBe(200)
      expect(shown(tooLong.html)).toEqual(shown(first.html))
    }))
})
