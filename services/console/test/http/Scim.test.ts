import { expect, layer } from "@effect/vitest"
import { Effect, Ref } from "effect"
import { MemoryWorld } from "../support/Memory.js"
import { Acme, alice, bob, everyone, gina } from "../support/People.js"
import { consoleServer, csrfOf, signedIn } from "../support/TestServer.js"

const world = Effect.flatMap(MemoryWorld, Ref.get)
const occurrences = (text: string, part: string) => text.split(part).length - 1
const scimBaseUrl = "http://api.test/api/v1/scim/v2"

layer(consoleServer(everyone()), { timeout: 30_000, excludeTestServices: true })("console SCIM provisioning page", (it) => {
  it.effect("an admin makes a token and sees it once with the base URL, lists it without it, revokes it; all recorded, never the token", () =>
    Effect.gen(function*() {
      const admin = yield* signedIn("alice@acme.test", alice.password)
      const page = yield* admin.get("/console/admin/scim")
      expect(page.status).toBe(200)
      expect(page.html).toContain('<a href="/console/admin/scim">SCIM provisioning</a>')
      expect(page.html).toContain(`value="${scimBaseUrl}"`)
      expect(page.html).toContain("No SCIM token yet.")
      const csrf = csrfOf(page)
      const blank = yield* admin.post("/console/admin/scim/new", { csrf, label: "   " })
      expect(blank.status).toBe(400)
      expect(blank.html).toContain("The label is 1 to 80 characters on one line")
      const created = yield* admin.post("/console/admin/scim/new", { csrf, label: "  Okta production " })
      expect(created.status).toBe(200)
      expect(created.headers["cache-control"]).toBe("no-store")
      const made = (yield* world).scimTokens.at(-1)!
      expect(made).toMatchObject({ tenantId: Acme.tenantId, label: "Okta production", createdBy: "console:alice@acme.test" })
      const token = (yield* world).scimSecrets.get(made.id)!
      expect(occurrences(created.html, token)).toBe(1)
      expect(created.html).toContain(`value="${token}"`)
      expect(created.html).toContain("This token is shown once, now.")
      expect(created.html).toContain(`value="${scimBaseUrl}"`)

      const list = yield* admin.get("/console/admin/scim")
      expect(list.html).not.toContain(token)
      const row = /<tr data-scim-token="[^"]+">.*?<\/tr>/s.exec(list.html)![0]
      expect(row).toContain("<td>Okta production</td>")
      expect(row).toContain(`<code>${made.tokenPrefix}</code>`)
      expect(row).toContain("<td>alice@acme.test</td>")
      expect(row).toContain("<td>never</td>")
      expect(row).toContain(`<form method="post" action="/console/admin/scim/${made.id}/revoke" class="inline">`)

      const revoked = yield* admin.post(`/console/admin/scim/${made.id}/revoke`, { csrf })
      expect(revoked.status).toBe(303)
      expect(revoked.location).toBe("/console/admin/scim?notice=revoked")
      const after = yield* admin.get(revoked.location!)
      expect(after.html).toContain("The token is revoked: the identity tool holding it is refused within a second.")
      expect(after.html).toMatch(/<td>revoked \d{4}-\d\d-\d\d \d\d:\d\d UTC<\/td><td><\/td><\/tr>/)
      expect(after.html).not.toContain(`/console/admin/scim/${made.id}/revoke`)

      const log = (yield* world).events.filter((e) => e.action.startsWith("scim_"))
      expect(log.map((e) => [e.action, e.target, e.actorEmail, e.tenantId])).toEqual([
        ["scim_token_created", made.id, "alice@acme.test", Acme.tenantId],
        ["scim_token_revoked", made.id, "alice@acme.test", Acme.tenantId]
      ])
      expect(JSON.stringify(log)).not.toContain(token)
    }))

  it.effect("a third active token is refused with a message on the page, the label kept; revoking one makes room", () =>
    Effect.gen(function*() {
      const admin = yield* signedIn("alice@acme.test", alice.password)
      const csrf = csrfOf(yield* admin.get("/console/admin/scim"))
      expect((yield* admin.post("/console/admin/scim/new", { csrf, label: "Entra ID" })).status).toBe(200)
      expect((yield* admin.post("/console/admin/scim/new", { csrf, label: "Entra ID next" })).status).toBe(200)
      const third = yield* admin.post("/console/admin/scim/new", { csrf, label: "One too many" })
      expect(third.status).toBe(409)
      expect(third.html).toContain("<h1>SCIM provisioning</h1>")
      expect(third.html).toContain(
        '<p class="error" role="alert">This workspace has 2 active SCIM tokens, the most it may hold: revoke the one the identity tool no longer uses, then make the new one.</p>'
      )
      expect(third.html).toContain('value="One too many"')
      const active = (yield* world).scimTokens.filter((t) => t.tenantId === Acme.tenantId && t.revokedAt === null)
      expect(active.map((t) => t.label)).toEqual(["Entra ID", "Entra ID next"])
      yield* admin.post(`/console/admin/scim/${active[0]!.id}/revoke`, { csrf })
      expect((yield* admin.post("/console/admin/scim/new", { csrf, label: "One too many" })).status).toBe(200)
    }))

  it.effect("revoking a revoked token again asks the gateway nothing and records nothing", () =>
    Effect.gen(function*() {
      const admin = yield* signedIn("alice@acme.test", alice.password)
      const csrf = csrfOf(yield* admin.get("/console/admin/scim"))
      const revokedOne = (yield* world).scimTokens.find((t) => t.tenantId === Acme.tenantId && t.revokedAt !== null)!
      const before = yield* world
      const [revocations, entries] = [before.gatewayCalls.filter((c) => c.op === "scim-revoke").length, before.events.length]
      const again = yield* admin.post(`/console/admin/scim/${revokedOne.id}/revoke`, { csrf })
      expect(again.location).toBe("/console/admin/scim?notice=revoked")
      const w = yield* world
      expect(w.gatewayCalls.filter((c) => c.op === "scim-revoke").length).toBe(revocations)
      expect(w.events.slice(entries).filter((e) => e.action.startsWith("scim_"))).toEqual([])
    }))

  it.effect("never lists or revokes another tenant's token, and keeps non-admins out", () =>
    Effect.gen(function*() {
      const admin = yield* signedIn("alice@acme.test", alice.password)
      yield* admin.post("/console/admin/scim/new", { csrf: csrfOf(yield* admin.get("/console/admin/scim")), label: "Acme only" })
      const acmeToken = (yield* world).scimTokens.at(-1)!
      const foreign = yield* signedIn("gina@globex.test", gina.password)
      const page = yield* foreign.get("/console/admin/scim")
      expect(page.html).not.toContain("Acme only")
      expect(page.html).not.toContain(acmeToken.id)
      const answer = yield* foreign.post(`/console/admin/scim/${acmeToken.id}/revoke`, { csrf: csrfOf(page) })
      expect(answer.status).toBe(404)
      expect(answer.html).toContain("There is no such SCIM token in this workspace.")
      expect((yield* world).scimTokens.find((t) => t.id === acmeToken.id)!.revokedAt).toBeNull()
      const member = yield* signedIn("bob@acme.test", bob.password)
      const refused = yield* member.get("/console/admin/scim")
      expect(refused.status).toBe(403)
      expect(refused.html).not.toContain("Acme only")
      expect(refused.html).not.toContain('href="/console/admin/scim"')
      const calls = (yield* world).gatewayCalls.length
      const csrf = csrfOf(yield* member.get("/console/tokens/new"))
      expect((yield* member.post("/console/admin/scim/new", { csrf, label: "Sneaky" })).status).toBe(403)
      expect((yield* member.post(`/console/admin/scim/${acmeToken.id}/revoke`, { csrf })).status).toBe(403)
      expect((yield* world).gatewayCalls.length).toBe(calls)
    }))
})
