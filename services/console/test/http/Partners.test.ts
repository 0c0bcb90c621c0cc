import { expect, layer } from "@effect/vitest"
import { Effect, Ref } from "effect"
import { MemoryWorld } from "../support/Memory.js"
import { Acme, alice, bob, everyone, gina } from "../support/People.js"
import { consoleServer, csrfOf, signedIn } from "../support/TestServer.js"

const world = Effect.flatMap(MemoryWorld, Ref.get)

layer(consoleServer(everyone()), { timeout: 30_000, excludeTestServices: true })("console partner client pages", (it) => {
  it.effect("an admin creates a client and sees its secret once, rotates it, disables and enables it; all recorded", () =>
    Effect.gen(function*() {
      const admin = yield* signedIn("alice@acme.test", alice.password)
      const page = yield* admin.get("/console/admin/partners")
      const csrf = csrfOf(page)
      const bad = yield* admin.post("/console/admin/partners/new", { csrf, name: "Not A Slug", scope: "read" })
      expect(bad.status).toBe(400)
      expect(bad.html).toContain('value="Not A Slug"')
      const created = yield* admin.post("/console/admin/partners/new", { csrf, name: "erp-sync", scope: "read" })
      expect(created.status).toBe(200)
      expect(created.headers["cache-control"]).toBe("no-store")
      const secret = (yield* world).partnerSecrets.get("service-partner-erp-sync")!
      expect(created.html).toContain(`value="${secret}"`)
      expect(created.html).toContain("This client secret is shown once, now.")
      expect(created.html).toContain("http://api.test/api/v1/oauth/token")
      expect((yield* world).partnerClients.at(-1)).toMatchObject({ tenantId: Acme.tenantId, scope: "read" })
      const list = yield* admin.get("/console/admin/partners")
      expect(list.html).toContain("service-partner-erp-sync")
      expect(list.html).not.toContain(secret)
      expect((yield* admin.post("/console/admin/partners/new", { csrf, name: "erp-sync", scope: "write" })).status).toBe(409)
      const rotated = yield* admin.post("/console/admin/partners/service-partner-erp-sync/rotate-secret", { csrf, graceHours: "24" })
      const newSecret = (yield* world).partnerSecrets.get("service-partner-erp-sync")!
      expect(newSecret).not.toBe(secret)
      expect(rotated.html).toContain(`value="${newSecret}"`)
      expect((yield* admin.post("/console/admin/partners/service-partner-erp-sync/disable", { csrf })).location).toContain("notice=disabled")
      expect((yield* world).partnerClients.at(-1)!.state).toBe("disabled")
      expect((yield* admin.post("/console/admin/partners/service-partner-erp-sync/enable", { csrf })).location).toContain("notice=enabled")
      const log = (yield* world).events.filter((e) => e.action.startsWith("partner_")).map((e) => [e.action, e.target])
      expect(log).toEqual([
        ["partner_client_created", "service-partner-erp-sync"],
        ["partner_secret_rotated", "service-partner-erp-sync"],
        ["partner_client_disabled", "service-partner-erp-sync"],
        ["partner_client_enabled", "service-partner-erp-sync"]
      ])
    }))

  it.effect("never lists or changes another tenant's client, and keeps non-admins out", () =>
    Effect.gen(function*() {
      const admin = yield* signedIn("alice@acme.test", alice.password)
      yield* admin.post("/console/admin/partners/new", { csrf: csrfOf(yield* admin.get("/console/admin/partners")), name: "acme-only", scope: "write" })
      const foreign = yield* signedIn("gina@globex.test", gina.password)
      const page = yield* foreign.get("/console/admin/partners")
      expect(page.html).not.toContain("service-partner-acme-only")
      const csrf = csrfOf(page)
      const secret = (yield* world).partnerSecrets.get("service-partner-acme-only")
      for (const action of ["rotate-secret", "disable", "enable"]) {
        const answer = yield* foreign.post(`/console/admin/partners/service-partner-acme-only/${action}`, { csrf, graceHours: "0" })
        expect(answer.status, action).toBe(404)
      }
      expect((yield* world).partnerSecrets.get("service-partner-acme-only")).toBe(secret)
      expect((yield* world).partnerClients.find((c) => c.clientId === "service-partner-acme-only")!.state).toBe("enabled")
      const member = yield* signedIn("bob@acme.test", bob.password)
      expect((yield* member.get("/console/admin/partners")).status).toBe(403)
    }))
})
