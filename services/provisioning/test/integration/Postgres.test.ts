import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { Member, MemberAccount, SignInCheck, TenantMember } from "@portfolio/domain"
import { ProvisioningOutbox } from "../../src/ports/ProvisioningOutbox.js"
import { IdentityProvider } from "../../src/ports/IdentityProvider.js"
import { DateTime, Deferred, Duration, Effect, Result, Fiber, Option, Redacted } from "effect"
import { acceptInvitation, inspectInvitationLink } from "../../src/usecases/Acceptance.js"
import { createInvitation, listInvitations, nextInvitationSlot, revokeInvitation } from "../../src/usecases/Invitations.js"
import { listMembers, removeMember } from "../../src/usecases/Members.js"
import { checkSignIn, getAccount } from "../../src/usecases/SignIn.js"
import { findMember, getTenant, provisionSsoMember, resendWelcome } from "../../src/usecases/Tenants.js"
import { adminOf, invite, lastMailTo, pageClient, tenantWithAdmin, TestOperator, tokenOf } from "../support/Fixtures.js"
import { PgAdaptersLive } from "../../src/adapters/postgres/PgAdapters.js"
import { PgAdaptersLayer, TestScryptCost } from "../support/PgLayers.js"
import { verifyPassword } from "../support/ScryptHash.js"
import { UnitOfWork } from "@portfolio/platform/sql"
import { randomBytes, scryptSync } from "node:crypto"

/** Moves an invitation's life back in time, keeping expires_at = created_at + 7 days. */
const age = (id: string, days: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE provisioning.invitations SET created_at = created_at - make_interval(days => ${days}),
        expires_at = expires_at - make_interval(days => ${days}) WHERE id = ${id}`)

layer(PgAdaptersLayer({ invitationsPerTenantPerHour: 1000 }), { timeout: 60_000 })("PostgreSQL adapters", (it) => {
  it.effect("tenants and their SIGNUP admin round-trip; a second slug is a Conflict", () =>
    Effect.gen(function*() {
      const { admin, tenant } = yield* tenantWithAdmin("acme", "Boss@Acme.test")
      expect(yield* getTenant("acme")).toEqual(tenant)
      expect((yield* findMember("acme", "BOSS@acme.test")).member).toEqual(admin)
      const again = yield* Effect.flip(tenantWithAdmin("acme"))
      expect(again).toMatchObject({ _tag: "Conflict", detail: "A tenant with the slug 'acme' already exists." })
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT count(*)::int AS n FROM provisioning.tenants WHERE slug = 'acme'`).toEqual([{ n: 1 }])
    }))

  it.effect("100 concurrent identical invitations give exactly one invitation and one PENDING row", () =>
    Effect.gen(function*() {
      const { caller, tenant } = yield* tenantWithAdmin("race")
      const results = yield* Effect.all(
        Array.from({ length: 100 }, (_, i) => Effect.result(createInvitation(caller, invite(i % 2 === 0 ? "jane@example.com" : "JANE@Example.com")))),
        { concurrency: "unbounded" }
      )
      const created = results.filter(Result.isSuccess)
      const refused = results.filter(Result.isFailure).map((r) => r.failure._tag)
      expect(created).toHaveLength(1)
      expect(refused).toEqual(Array.from({ length: 99 }, () => "AlreadyInvited"))
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT count(*)::int AS n FROM provisioning.invitations WHERE tenant_id = ${tenant.id} AND lower(email) = 'jane@example.com'`)
        .toEqual([{ n: 1 }])
      expect(yield* sql`SELECT count(*)::int AS n FROM provisioning.outbound_mail WHERE lower(to_address) = 'jane@example.com'`).toEqual([{ n: 1 }])
    }))

  it.effect("an expired invitation no longer blocks, and reads as EXPIRED", () =>
    Effect.gen(function*() {
      const { caller, welcome } = yield* tenantWithAdmin("expiry")
      const old = yield* createInvitation(caller, invite("late@example.com"))
      yield* age(old.id, 7)
      const renewed = yield* createInvitation(caller, invite("LATE@example.com"))
      const listed = (yield* listInvitations(caller)).filter((i) => i.id !== welcome?.invitationId)
      expect(listed.map((i) => [i.id, i.status])).toEqual([[renewed.id, "PENDING"], [old.id, "EXPIRED"]])
      expect(Duration.toMillis(DateTime.distance(renewed.createdAt, renewed.expiresAt))).toBe(7 * 24 * 3600 * 1000)
      const revoke = yield* Effect.flip(revokeInvitation(caller, old.id))
      expect(revoke).toMatchObject({ _tag: "InvitationNotPending", detail: "Only a PENDING invitation can be revoked; this one is EXPIRED." })
    }))

  it.effect("acceptance creates the account with a scrypt hash, the INVITATION member, and consumes the link", () =>
    Effect.gen(function*() {
      const { caller } = yield* tenantWithAdmin("accept")
      const invitation = yield* createInvitation(caller, invite("Ann@Example.com", "arb-member"))
      const token = tokenOf(yield* lastMailTo("ann@example.com"))
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT count(*)::int AS n FROM provisioning.accounts WHERE lower(email) = 'ann@example.com'`).toEqual([{ n: 0 }])
      expect(yield* sql`SELECT count(*)::int AS n FROM provisioning.invitations WHERE token_hash = ${token}`).toEqual([{ n: 0 }])
      expect(yield* inspectInvitationLink(token)).toEqual({
        email: "Ann@Example.com",
        tenantSlug: "accept",
        arbRole: "arb-member",
        alreadyMember: false,
        hasPassword: false
      })
      const attempts = yield* Effect.all(
        Array.from({ length: 5 }, () => Effect.result(acceptInvitation(token, Redacted.make("a very good password"), pageClient))),
        { concurrency: "unbounded" }
      )
      const accepted = attempts.filter(Result.isSuccess).map((r) => r.success)
      expect(accepted).toHaveLength(1)
      expect(attempts.filter(Result.isFailure).map((r) => r.failure.detail)).toEqual(Array(4).fill("This invitation link is not valid."))
      const member = accepted[0]!
      const [account] = yield* sql<{ subject: string; passwordHash: string }>`SELECT subject, password_hash FROM provisioning.accounts WHERE lower(email) = 'ann@example.com'`
      expect(member).toEqual(new Member({ userSub: account!.subject, userEmail: "Ann@Example.com", arbRole: "arb-member", source: "INVITATION", grantedAt: member.grantedAt }))
      expect(account!.passwordHash).toMatch(new RegExp(`^scrypt\\$${TestScryptCost.N}\\$${TestScryptCost.r}\\$${TestScryptCost.p}\\$`))
      expect(yield* verifyPassword("a very good password", account!.passwordHash)).toBe(true)
      expect(yield* verifyPassword("a wrong password!!", account!.passwordHash)).toBe(false)
      expect((yield* listInvitations(caller)).find((i) => i.id === invitation.id)?.status).toBe("ACCEPTED")
      expect((yield* listMembers(caller))[0]).toEqual(member)
      // One entry for the one acceptance that committed, none for the four refused.
      expect(yield* sql`SELECT tenant_id, actor_sub, actor_email, action, target, ip, user_agent, detail
                        FROM provisioning.security_events WHERE target = ${invitation.id}`).toEqual([{
        tenantId: caller.tenantId,
        actorSub: member.userSub,
        actorEmail: "Ann@Example.com",
        action: "invitation_accepted",
        target: invitation.id,
        ip: pageClient.ip,
        userAgent: pageClient.userAgent,
        detail: { role: "arb-member", kind: "invitation" }
      }])
    }))

  it.effect("the acceptance's security log entry is in its transaction: undone with it", () =>
    Effect.gen(function*() {
      const { caller } = yield* tenantWithAdmin("undone")
      const invitation = yield* createInvitation(caller, invite("undone@example.com"))
      const token = tokenOf(yield* lastMailTo("undone@example.com"))
      const unitOfWork = yield* UnitOfWork
      // The acceptance inside a transaction that fails once everything is written.
      const failed = yield* Effect.flip(unitOfWork.run(
        acceptInvitation(token, Redacted.make("a very good password"), pageClient).pipe(Effect.andThen(Effect.fail("later")))
      ))
      expect(failed).toBe("later")
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT count(*)::int AS n FROM provisioning.security_events WHERE target = ${invitation.id}`).toEqual([{ n: 0 }])
      expect((yield* listInvitations(caller)).find((i) => i.id === invitation.id)?.status).toBe("PENDING")
    }))

  it.effect("migration 0006 gives every invitation a kind: 'invitation' unless said otherwise, and no kind but the two", () =>
    Effect.gen(function*() {
      const { tenant } = yield* tenantWithAdmin("kinds")
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT max(migration_id)::int AS latest FROM provisioning.migrations`).toEqual([{ latest: 13 }])
      // A row written as before the migration (no kind) is an invitation, counted by the hourly limit.
      const [raw] = yield* sql<{ id: string; kind: string }>`
        INSERT INTO provisioning.invitations (id, tenant_id, email, arb_role, invited_by_email, created_at, expires_at, token_hash)
        VALUES (gen_random_uuid(), ${tenant.id}, 'raw@example.com', 'viewer', 'admin@kinds.test', now(), now() + interval '168 hours', 'raw-hash')
        RETURNING id, kind`
      expect(raw!.kind).toBe("invitation")
      const refused = yield* Effect.flip(sql`UPDATE provisioning.invitations SET kind = 'reminder' WHERE id = ${raw!.id}`)
      expect((refused.reason.cause as { code?: string }).code).toBe("23514")
      expect(yield* sql`SELECT email, kind FROM provisioning.invitations WHERE tenant_id = ${tenant.id} ORDER BY kind`).toEqual([
        { email: "raw@example.com", kind: "invitation" },
        { email: "admin@kinds.test", kind: "welcome" }
      ])
    }))

  it.effect("migration 0009 counts the wrong passwords of every invitation from 0, never below", () =>
    Effect.gen(function*() {
      const { tenant } = yield* tenantWithAdmin("wrong-count")
      const sql = yield* SqlClient.SqlClient
      // A row written as before the migration (no count) has had no wrong password.
      const [raw] = yield* sql<{ id: string; wrongPasswords: number }>`
        INSERT INTO provisioning.invitations (id, tenant_id, email, arb_role, invited_by_email, created_at, expires_at, token_hash)
        VALUES (gen_random_uuid(), ${tenant.id}, 'raw@example.com', 'viewer', 'admin@wrong-count.test', now(), now() + interval '168 hours', 'raw-count-hash')
        RETURNING id, wrong_passwords`
      expect(raw!.wrongPasswords).toBe(0)
      const refused = yield* Effect.flip(sql`UPDATE provisioning.invitations SET wrong_passwords = -1 WHERE id = ${raw!.id}`)
      expect((refused.reason.cause as { code?: string }).code).toBe("23514")
    }))

  it.effect("a resent welcome revokes the pending one in the same transaction; ten concurrent resends leave one pending link", () =>
    Effect.gen(function*() {
      const { tenant, welcome } = yield* tenantWithAdmin("resend", "boss@resend.test")
      const sql = yield* SqlClient.SqlClient
      const again = yield* resendWelcome("resend", "boss@resend.test", TestOperator)
      const results = yield* Effect.all(Array.from({ length: 10 }, () => Effect.result(resendWelcome("resend", "boss@resend.test", TestOperator))), { concurrency: "unbounded" })
      expect(results.filter(Result.isFailure).every((r) => r.failure._tag === "Conflict")).toBe(true)
      const rows = yield* sql<{ id: string; kind: string; revoked: boolean }>`
        SELECT id, kind, revoked_at IS NOT NULL AS revoked FROM provisioning.invitations WHERE tenant_id = ${tenant.id}`
      expect(rows.map((r) => r.kind).every((k) => k === "welcome")).toBe(true)
      // The rows share one clock instant, so their order says nothing: who is revoked does.
      const pending = rows.filter((r) => !r.revoked)
      expect(pending).toHaveLength(1)
      expect(rows.filter((r) => r.revoked).map((r) => r.id)).toEqual(expect.arrayContaining([welcome!.invitationId, again.invitationId]))
      expect([welcome!.invitationId, again.invitationId]).not.toContain(pending[0]!.id)
      const token = tokenOf(yield* lastMailTo("boss@resend.test"))
      expect((yield* inspectInvitationLink(token)).alreadyMember).toBe(true)
    }))

  it.effect("the welcome is stored as kind 'welcome' by the operator, mailed sealed, not counted, and sets the admin's password keeping one membership", () =>
    Effect.gen(function*() {
      const { admin, caller, tenant, welcome } = yield* tenantWithAdmin("welcome", "Boss@Welcome.test")
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT id, kind, arb_role, invited_by_email FROM provisioning.invitations WHERE tenant_id = ${tenant.id}`).toEqual([
        { id: welcome!.invitationId, kind: "welcome", arbRole: "tenant-admin", invitedByEmail: TestOperator }
      ])
      expect(yield* nextInvitationSlot(tenant.id)).toEqual(yield* DateTime.now)
      const text = yield* lastMailTo("boss@welcome.test")
      const token = tokenOf(text)
      // The local mailer keeps the body sealed: the link is readable only through the archive.
      const [kept] = yield* sql<{ subject: string; body: string }>`
        SELECT subject, encode(sealed_body, 'escape') AS body FROM provisioning.outbound_mail WHERE lower(to_address) = 'boss@welcome.test'`
      expect(kept!.subject).toBe("Your workspace welcome is ready: set your password")
      expect(kept!.body).not.toContain(token)

      expect(yield* inspectInvitationLink(token)).toEqual({
        email: "Boss@Welcome.test",
        tenantSlug: "welcome",
        arbRole: "tenant-admin",
        alreadyMember: true,
        hasPassword: false
      })
      expect(yield* acceptInvitation(token, Redacted.make("a very good password"), pageClient)).toEqual(admin)
      const [account] = yield* sql<{ subject: string; passwordHash: string }>`
        SELECT subject, password_hash FROM provisioning.accounts WHERE lower(email) = 'boss@welcome.test'`
      expect(account!.subject).toBe(admin.userSub)
      expect(yield* verifyPassword("a very good password", account!.passwordHash)).toBe(true)
      expect(yield* sql`SELECT user_sub, arb_role, source FROM provisioning.members WHERE tenant_id = ${tenant.id}`).toEqual([
        { userSub: admin.userSub, arbRole: "tenant-admin", source: "SIGNUP" }
      ])
      expect((yield* listInvitations(caller)).map((i) => [i.id, i.status])).toEqual([[welcome!.invitationId, "ACCEPTED"]])

      // The account has a password now: the next tenant of that admin mails nothing.
      const next = yield* tenantWithAdmin("welcome-two", "boss@welcome.test")
      expect(next.welcome).toBeNull()
      expect(yield* sql`SELECT count(*)::int AS n FROM provisioning.invitations WHERE tenant_id = ${next.tenant.id}`).toEqual([{ n: 0 }])
      expect(yield* sql`SELECT count(*)::int AS n FROM provisioning.outbound_mail WHERE lower(to_address) = 'boss@welcome.test'`).toEqual([{ n: 1 }])
    }))

  it.effect("an invitation accepted by someone already an active member sets their password and keeps their one membership", () =>
    Effect.gen(function*() {
      const { caller, tenant } = yield* tenantWithAdmin("member-accepts")
      const invitation = yield* createInvitation(caller, invite("sso@example.com", "tenant-admin"))
      const token = tokenOf(yield* lastMailTo("sso@example.com"))
      const sso = yield* provisionSsoMember({ slug: "member-accepts", userSub: "oidc|sso", email: "SSO@example.com", arbRole: "viewer" })
      expect(yield* acceptInvitation(token, Redacted.make("a very good password"), pageClient)).toEqual(sso.member)
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT user_sub, arb_role, source FROM provisioning.members WHERE tenant_id = ${tenant.id} AND lower(email) = 'sso@example.com'`)
        .toEqual([{ userSub: "oidc|sso", arbRole: "viewer", source: "SSO_JIT" }])
      const [account] = yield* sql<{ passwordHash: string }>`SELECT password_hash FROM provisioning.accounts WHERE lower(email) = 'sso@example.com'`
      expect(yield* verifyPassword("a very good password", account!.passwordHash)).toBe(true)
      expect((yield* listInvitations(caller)).find((i) => i.id === invitation.id)?.status).toBe("ACCEPTED")
    }))

  it.effect("removal keeps the row, writes member.removed to the outbox in the same transaction, and allows a new invitation", () =>
    Effect.gen(function*() {
      const { admin, caller, tenant } = yield* tenantWithAdmin("removal")
      const other = yield* tenantWithAdmin("removal-other")
      yield* createInvitation(caller, invite("leaver@example.com"))
      const leaver = yield* acceptInvitation(tokenOf(yield* lastMailTo("leaver@example.com")), Redacted.make("a very good password"), pageClient)
      const unknown = yield* Effect.flip(removeMember(caller, "nobody"))
      const foreign = yield* Effect.flip(removeMember(caller, other.admin.userSub))
      expect(foreign).toEqual(unknown)
      yield* removeMember(caller, leaver.userSub)
      expect(yield* listMembers(caller)).toEqual([admin])
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ removedAt: Date | null }>`SELECT removed_at FROM provisioning.members WHERE tenant_id = ${tenant.id} AND user_sub = ${leaver.userSub}`
      expect(rows).toHaveLength(1)
      expect(rows[0]!.removedAt).toBeInstanceOf(Date)
      const events = yield* sql<{ subject: string; payload: unknown }>`SELECT subject, payload FROM provisioning.outbox WHERE payload->>'userSub' = ${leaver.userSub}`
      expect(events).toEqual([{
        subject: "events.provisioning.member.removed",
        payload: { id: expect.any(String), type: "member.removed", occurredAt: expect.any(String), tenantId: tenant.id, userSub: leaver.userSub }
      }])
      expect(yield* Effect.flip(removeMember(caller, leaver.userSub))).toEqual(unknown)
      const back = yield* createInvitation(caller, invite("leaver@example.com"))
      expect(back.status).toBe("PENDING")
    }))

  it.effect("two concurrent removals of a tenant's last two tenant-admins: the second waits for the first, then gets LAST_TENANT_ADMIN", () =>
    Effect.gen(function*() {
      const { admin, caller, tenant } = yield* tenantWithAdmin("last-admins")
      yield* createInvitation(caller, invite("second@last-admins.test", "tenant-admin"))
      const second = yield* acceptInvitation(tokenOf(yield* lastMailTo("second@last-admins.test")), Redacted.make("a very good password"), pageClient)
      // The first removal stops inside its transaction, after its checks, until the gate opens.
      const outbox = yield* ProvisioningOutbox
      const gate = yield* Deferred.make<void>()
      const held = ProvisioningOutbox.of({ append: (events) => Effect.andThen(Deferred.await(gate), outbox.append(events)) })
      const first = yield* Effect.forkChild(removeMember(caller, second.userSub).pipe(Effect.provideService(ProvisioningOutbox, held), Effect.result))
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 300)))
      const other = yield* Effect.forkChild(Effect.result(removeMember(adminOf(tenant.id, second.userSub), admin.userSub)))
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 500)))
      expect(other.pollUnsafe() === undefined, "the second removal decided while the first one was still open").toBe(true)
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Fiber.join(first)).toEqual(Result.succeed(undefined))
      const refused = yield* Fiber.join(other)
      expect(Result.isFailure(refused) && refused.failure._tag).toBe("LastTenantAdmin")
      expect((yield* listMembers(caller)).map((m) => m.userSub)).toEqual([admin.userSub])
    }))

  it.effect("sign-in over PostgreSQL: the account of a right password with its active memberships by slug; null for a wrong one", () =>
    Effect.gen(function*() {
      const password = Redacted.make("a very good password")
      const zulu = yield* tenantWithAdmin("zulu-signin", "Pat@SignIn.test")
      yield* acceptInvitation(tokenOf(yield* lastMailTo("pat@signin.test")), password, pageClient)
      const bravo = yield* tenantWithAdmin("bravo-signin")
      yield* createInvitation(bravo.caller, invite("pat@signin.test", "contributor"))
      const inBravo = yield* acceptInvitation(tokenOf(yield* lastMailTo("pat@signin.test")), password, pageClient)
      const kilo = yield* tenantWithAdmin("kilo-signin")
      yield* createInvitation(kilo.caller, invite("pat@signin.test", "viewer"))
      yield* acceptInvitation(tokenOf(yield* lastMailTo("pat@signin.test")), password, pageClient)
      yield* removeMember(kilo.caller, zulu.admin.userSub)
      const pat = new MemberAccount({
        subject: zulu.admin.userSub,
        email: "Pat@SignIn.test",
        // Set once, through the welcome link: the later links asked for it and left it as it was.
        passwordSetAt: Option.getOrThrow(yield* (yield* IdentityProvider).findAccount(zulu.admin.userSub)).passwordSetAt,
        memberships: [new TenantMember({ tenant: bravo.tenant, member: inBravo }), new TenantMember({ tenant: zulu.tenant, member: zulu.admin })],
        ssoOnlyTenantIds: []
      })
      expect(yield* checkSignIn("PAT@signin.TEST", password)).toEqual(new SignInCheck({ account: pat }))
      expect(yield* getAccount(pat.subject)).toEqual(pat)
      expect(yield* checkSignIn("pat@signin.test", Redacted.make("a very good password."))).toEqual(new SignInCheck({ account: null }))
      expect(yield* Effect.flip(getAccount("not-a-uuid"))).toMatchObject({ _tag: "NotFound" })
    }))

  it.effect("the sign-in check reads the scrypt parameters from the stored hash; a hash it cannot read matches nothing", () =>
    Effect.gen(function*() {
      const identity = yield* IdentityProvider
      const sql = yield* SqlClient.SqlClient
      const account = yield* identity.ensureAccount("params@example.com")
      const salt = randomBytes(16)
      // Cheaper than today's cost, and a longer key: only the stored parameters give this key back.
      const key = scryptSync("the stored password", salt, 48, { N: 2 ** 14, r: 4, p: 2 })
      const stored = `scrypt$${2 ** 14}$4$2$${salt.toString("base64")}$${key.toString("base64")}`
      const setHash = (hash: string) => sql`UPDATE provisioning.accounts SET password_hash = ${hash} WHERE subject = ${account.subject}`
      yield* setHash(stored)
      const found = Option.some({ ...account, hasPassword: true })
      expect(yield* identity.verifyPassword("params@example.com", Redacted.make("the stored password"))).toEqual(found)
      expect(yield* identity.verifyPassword("params@example.com", Redacted.make("another password"))).toEqual(Option.none())
      for (const unreadable of [`bcrypt${stored.slice("scrypt".length)}`, `${stored}$extra`, stored.replace(`$${2 ** 14}$`, "$1000$"), "scrypt$$$$$", ""]) {
        yield* setHash(unreadable)
        expect(yield* identity.verifyPassword("params@example.com", Redacted.make("the stored password")), unreadable).toEqual(Option.none())
      }
    }))

  it.effect("migration 0007 indexes the active memberships by userSub", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT indexdef FROM pg_indexes WHERE schemaname = 'provisioning' AND indexname = 'members_active_by_sub'`).toEqual([
        { indexdef: "CREATE INDEX members_active_by_sub ON provisioning.members USING btree (user_sub) WHERE (removed_at IS NULL)" }
      ])
    }))
})

layer(PgAdaptersLayer({ invitationsPerTenantPerHour: 5 }), { timeout: 60_000 })("invitation rate on PostgreSQL", (it) => {
  it.effect("holds under concurrency: 20 simultaneous invitations with a limit of 5 create exactly 5", () =>
    Effect.gen(function*() {
      const { caller, tenant } = yield* tenantWithAdmin("burst")
      const results = yield* Effect.all(
        Array.from({ length: 20 }, (_, i) => Effect.result(createInvitation(caller, invite(`person${i}@example.com`)))),
        { concurrency: "unbounded" }
      )
      expect(results.filter(Result.isSuccess)).toHaveLength(5)
      expect(results.filter(Result.isFailure).map((r) => r.failure._tag)).toEqual(Array(15).fill("RateLimited"))
      const sql = yield* SqlClient.SqlClient
      // The admin's welcome link, made with the tenant, took none of the 5.
      expect(yield* sql`SELECT kind, count(*)::int AS n FROM provisioning.invitations WHERE tenant_id = ${tenant.id} GROUP BY kind ORDER BY kind`)
        .toEqual([{ kind: "invitation", n: 5 }, { kind: "welcome", n: 1 }])
      // The oldest invitation leaving the hour frees one slot.
      yield* sql`UPDATE provisioning.invitations SET created_at = created_at - interval '61 minutes', expires_at = expires_at - interval '61 minutes'
                 WHERE id = (SELECT id FROM provisioning.invitations WHERE tenant_id = ${tenant.id} AND kind = 'invitation' ORDER BY created_at LIMIT 1)`
      expect((yield* createInvitation(caller, invite("late@example.com"))).status).toBe("PENDING")
      expect((yield* Effect.flip(createInvitation(caller, invite("later@example.com"))))._tag).toBe("RateLimited")
    }))
})

// The adapters as main.ts wires them, at the cost the service runs with: a derivation is a second of CPU here.
layer(PgAdaptersLayer({}, PgAdaptersLive), { timeout: 60_000 })("scrypt at the service's cost", (it) => {
  it.effect("a password is hashed at OWASP's floor, N = 2^17, r = 8, p = 1", () =>
    Effect.gen(function*() {
      const identity = yield* IdentityProvider
      const sql = yield* SqlClient.SqlClient
      const account = yield* identity.ensureAccount("floor@example.com")
      yield* identity.setPassword(account.subject, Redacted.make("a password at the floor"))
      const [stored] = yield* sql<{ passwordHash: string }>`SELECT password_hash FROM provisioning.accounts WHERE subject = ${account.subject}`
      expect(stored!.passwordHash).toMatch(/^scrypt\$131072\$8\$1\$/)
      expect(yield* verifyPassword("a password at the floor", stored!.passwordHash)).toBe(true)
    }))

  it.effect("an unknown e-mail and an account without a password cost a scrypt derivation, as a wrong password does", () =>
    Effect.gen(function*() {
      const identity = yield* IdentityProvider
      const withPassword = yield* identity.ensureAccount("timed@example.com")
      yield* identity.setPassword(withPassword.subject, Redacted.make("the timed password"))
      yield* identity.ensureAccount("unset@example.com")
      const timed = (email: string) =>
        Effect.gen(function*() {
          const start = performance.now()
          expect(yield* identity.verifyPassword(email, Redacted.make("a wrong password"))).toEqual(Option.none())
          return performance.now() - start
        })
      const wrong = Math.min(yield* timed("timed@example.com"), yield* timed("timed@example.com"))
      // A lookup alone takes a millisecond or two; scrypt at today's cost, hundreds. A quarter of a
      // wrong password's time leaves room for a loaded machine and none for a skipped derivation.
      expect(yield* timed("nobody@example.com")).toBeGreaterThan(wrong / 4)
      expect(yield* timed("unset@example.com")).toBeGreaterThan(wrong / 4)
      expect(wrong).toBeGreaterThan(20)
    }))
})
