import { expect, layer } from "@effect/vitest"
import { Effect, Ref } from "effect"
import { MemoryWorld } from "../support/Memory.js"
import { alice, everyone } from "../support/People.js"
import { consoleServer, csrfOf, signedIn } from "../support/TestServer.js"

const world = Effect.flatMap(MemoryWorld, Ref.get)
const calls = Effect.map(world, (w) => [...w.gatewayCalls, ...w.memberCalls, ...w.dispatcherCalls].length)

const uuid = "00000000-0000-4000-8000-000000000000"

/**
 * An id in a page's path that the admin API it goes to would not take (issue 25, finding 4): a
 * '?', '#', '/', tab or NUL decoded from the path, or simply not of its kind. Every page and form
 * that takes one answers the console's 404 page, and no service is asked anything.
 */
const malformed: ReadonlyArray<readonly ["GET" | "POST", string]> = [
  ["POST", "/console/tokens/not-a-uuid/revoke"],
  ["POST", `/console/tokens/${uuid}%3Fx=1/revoke`],
  ["POST", `/console/admin/requests/${uuid}%23x/approve`],
  ["POST", `/console/admin/requests/%09/deny`],
  ["POST", "/console/admin/invitations/a%00b/revoke"],
  ["POST", `/console/admin/invitations/${uuid}%2Fx/revoke`],
  ["POST", "/console/admin/members/.%09./remove"],
  ["POST", "/console/admin/partners/service-partner-erp%3Fx=1/rotate-secret"],
  ["POST", "/console/admin/partners/service-partner-erp%09/enable"],
  ["POST", "/console/admin/partners/service-partner-ERP/disable"],
  ["POST", "/console/admin/scim/not-a-uuid/revoke"],
  ["POST", `/console/admin/scim/${uuid}%3Fx=1/revoke`],
  ["GET", `/console/admin/webhooks/${uuid}%09`],
  ["POST", `/console/admin/webhooks/${uuid}%23`],
  ["POST", "/console/admin/webhooks/.%09./enable"],
  ["POST", "/console/admin/webhooks/a%00b/disable"],
  ["POST", `/console/admin/webhooks/${uuid}x/rotate-secret`],
  ["POST", `/console/admin/webhooks/%2E%2E%09/recover`],
  ["GET", `/console/admin/webhooks/${uuid}/deliveries/${uuid}%3Fx`],
  ["GET", `/console/admin/webhooks/a%23b/deliveries/${uuid}`],
  ["POST", `/console/admin/webhooks/${uuid}/deliveries/%09/redeliver`]
]

layer(consoleServer(everyone()), { timeout: 30_000, excludeTestServices: true })("console pages' path ids", (it) => {
  it.effect(`answers the 404 page to an id of the wrong kind on every page and form that takes one (${malformed.length}), calling no service`, () =>
    Effect.gen(function*() {
      const admin = yield* signedIn("alice@acme.test", alice.password)
      const csrf = csrfOf(yield* admin.get("/console/tokens/new"))
      const before = yield* calls
      for (const [method, path] of malformed) {
        const answer = method === "GET" ? yield* admin.get(path) : yield* admin.post(path, { csrf, reason: "no", graceHours: "0", since: "2026-01-01T00:00", url: "https://x.test/" })
        expect(answer.status, `${method} ${path}`).toBe(404)
        expect(answer.html, `${method} ${path}`).toContain("Page not found")
      }
      expect(yield* calls).toBe(before)
    }))
})
