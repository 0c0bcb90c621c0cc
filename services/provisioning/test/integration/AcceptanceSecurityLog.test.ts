import { HttpClient, HttpClientRequest } from "effect/http"
import { SqlClient } from "effect/sql"
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

  it.effect("an account with a password: a wrong one is refused yet counted and recorded, the right one joins, the password never set again", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const client = yield* HttpClient.HttpClient
      const page = (token: string) => client.execute(HttpClientRequest.get(`/accept/${token}`))
      const post = (token: string, fields: Record<string, string>) =>
        client.execute(HttpClientRequest.post(`/accept/${token}`).pipe(HttpClientRequest.bodyUrlParams(fields)))
      const current = "kim's sturdy passphrase"
      const home = yield* tenantWithAdmin("kims-home", "kim@example.com")
      expect((yield* post(tokenOf(yield* lastMailTo("kim@example.com")), { password: current, confirm: current })).status).toBe(200)
      const credentials = sql<{ passwordHash: string; passwordSetAt: Date }>`
        SELECT password_hash, password_set_at FROM provisioning.accounts WHERE subject = ${home.admin.userSub}`
      const [before] = yield* credentials
      expect(before!.passwordSetAt).toBeInstanceOf(Date)
      const invitationRow = (id: string) =>
        sql<{ wrongPasswords: number; accepted: boolean; revoked: boolean }>`
          SELECT wrong_passwords, accepted_at IS NOT NULL AS accepted, revoked_at IS NOT NULL AS revoked
          FROM provisioning.invitations WHERE id = ${id}`.pipe(Effect.map((rows) => rows[0]))
      const refusals = (tenantId: string) =>
        sql<{ actorSub: string | null; detail: unknown }>`
          SELECT actor_sub, detail FROM provisioning.security_events
          WHERE tenant_id = ${tenantId} AND action = 'invitation_password_refused' ORDER BY at, detail->>'wrongPasswords'`

      const joined = yield* tenantWithAdmin("kims-club")
      const invitation = yield* createInvitation(joined.caller, invite("Kim@Example.com", "viewer"))
      const token = tokenOf(yield* lastMailTo("Kim@Example.com"))
      const form = yield* (yield* page(token)).text
      expect(form).toContain("You already have an account: enter your password to accept.")
      // The refusal rolls nothing back that counts: the count and the entry are kept.
      const refused = yield* post(token, { password: "a brand new passphrase", confirm: "a brand new passphrase" })
      expect(refused.status).toBe(401)
      expect(yield* refused.text).toContain("The password is not right.")
      expect(yield* invitationRow(invitation.id)).toEqual({ wrongPasswords: 1, accepted: false, revoked: false })
      expect(yield* refusals(joined.caller.tenantId)).toEqual([
        { actorSub: null, detail: { role: "viewer", kind: "invitation", wrongPasswords: 1 } }
      ])
      expect((yield* post(token, { password: current })).status).toBe(200)
      expect(yield* invitationRow(invitation.id)).toEqual({ wrongPasswords: 1, accepted: true, revoked: false })
      expect(yield* credentials).toEqual([before])

      const guessed = yield* tenantWithAdmin("kims-guessed")
      const target = yield* createInvitation(guessed.caller, invite("kim@example.com", "architect"))
      const link = tokenOf(yield* lastMailTo("kim@example.com"))
      for (let i = 1; i <= 5; i++) expect((yield* post(link, { password: `guess number ${i}` })).status).toBe(401)
      expect(yield* invitationRow(target.id)).toEqual({ wrongPasswords: 5, accepted: false, revoked: true })
      expect((yield* refusals(guessed.caller.tenantId)).map((e) => (e.detail as { wrongPasswords: number }).wrongPasswords)).toEqual([1, 2, 3, 4, 5])
      expect((yield* page(link)).status).toBe(404)
      expect((yield* post(link, { password: current })).status).toBe(404)
      expect(yield* credentials).toEqual([before])
    }))
})
