import { HttpClient, HttpClientRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { PublicHttpLive } from "../../src/adapters/http/Servers.js"
import { createInvitation } from "../../src/usecases/Invitations.js"
import { invite, lastMailTo, tenantWithAdmin, tokenOf } from "../support/Fixtures.js"
import { PgAdaptersLayer } from "../support/PgLayers.js"
import { testServer } from "../support/TestServer.js"

// One reverse proxy in front: the client is the entry it appended, the rightmost one.
const TestServer = testServer(PublicHttpLive, PgAdaptersLayer({ trustedProxyHops: 1 }))

layer(TestServer, { timeout: 60_000, excludeTestServices: true })("acceptance page over PostgreSQL: the security log", (it) => {
  it.effect("records invitation_accepted with the address the trusted proxy saw and the page's user agent, cut to 300 characters", () =>
    Effect.gen(function*() {
      const { admin, caller } = yield* tenantWithAdmin("logged")
      const invitation = yield* createInvitation(caller, invite("Lou@Example.com", "viewer"))
      const token = tokenOf(yield* lastMailTo("lou@example.com"))
      const client = yield* HttpClient.HttpClient
      const post = (password: string) =>
        client.execute(HttpClientRequest.post(`/accept/${token}`).pipe(
          HttpClientRequest.setHeaders({ "x-forwarded-for": "10.9.9.9, 198.51.100.23", "user-agent": `Agent/${"x".repeat(400)}` }),
          HttpClientRequest.bodyUrlParams({ password, confirm: password })
        ))
      expect((yield* post("short")).status).toBe(400)
      const sql = yield* SqlClient.SqlClient
      const logged = sql`SELECT tenant_id, actor_sub, actor_email, action, target, ip, user_agent, detail
                         FROM provisioning.security_events WHERE tenant_id = ${caller.tenantId}`
      expect(yield* logged).toEqual([])
      expect((yield* post("a sturdy passphrase of words")).status).toBe(200)
      const [account] = yield* sql<{ subject: string }>`SELECT subject FROM provisioning.accounts WHERE lower(email) = 'lou@example.com'`
      expect(account!.subject).not.toBe(admin.userSub)
      expect(yield* logged).toEqual([{
        tenantId: caller.tenantId,
        actorSub: account!.subject,
        actorEmail: "Lou@Example.com",
        action: "invitation_accepted",
        target: invitation.id,
        ip: "198.51.100.23",
        userAgent: `Agent/${"x".repeat(294)}`,
        detail: { role: "viewer", kind: "invitation" }
      }])
    }))
})
