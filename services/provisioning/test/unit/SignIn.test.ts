import { describe, expect, it } from "@effect/vitest"
import { MemberAccount, SignInCheck, TenantMember } from "@portfolio/domain"
import { DateTime, Duration, Effect, Layer, Redacted, Ref } from "effect"
import { TestClock } from "effect/testing"
import { acceptInvitation } from "../../src/usecases/Acceptance.js"
import { createInvitation } from "../../src/usecases/Invitations.js"
import { removeMember } from "../../src/usecases/Members.js"
import { checkSignIn, getAccount } from "../../src/usecases/SignIn.js"
import { adminOf, invite, lastMailTo, pageClient, tenantWithAdmin, tokenOf } from "../support/Fixtures.js"
import { captureLogs } from "../support/Logs.js"
import { MemoryLayer, MemoryStore } from "../support/Memory.js"

const password = "correct horse battery staple"
const acceptMailTo = (email: string) => Effect.flatMap(lastMailTo(email), (text) => acceptInvitation(tokenOf(text), Redacted.make(password), pageClient))
const signIn = (email: string, typed: string) => checkSignIn(email, Redacted.make(typed))

/**
 * Ann, tenant-admin of zeta (her welcome link accepted), architect of alpha, once a viewer of mid
 * (removed since); the tenants written in that order, which is not their slugs'. Bob, admin of
 * bobco, never set a password.
 */
const people = Effect.gen(function*() {
  yield* TestClock.setTime(Date.parse("2026-07-01T09:00:00.000Z"))
  const zeta = yield* tenantWithAdmin("zeta", "Ann@Example.com")
  yield* acceptMailTo("Ann@Example.com")
  yield* TestClock.adjust(Duration.minutes(5))
  const alpha = yield* tenantWithAdmin("alpha")
  yield* createInvitation(alpha.caller, invite("ann@example.com", "architect"))
  const annInAlpha = yield* acceptMailTo("ann@example.com")
  const mid = yield* tenantWithAdmin("mid")
  yield* createInvitation(mid.caller, invite("ANN@example.com", "viewer"))
  yield* acceptMailTo("ANN@example.com")
  yield* removeMember(mid.caller, zeta.admin.userSub)
  const bob = yield* tenantWithAdmin("bobco", "bob@example.com")
  const ann = new MemberAccount({
    subject: zeta.admin.userSub,
    email: "Ann@Example.com",
    // Set once, through her welcome link: the later links asked for it and left it as it was.
    passwordSetAt: DateTime.makeUnsafe("2026-07-01T09:00:00.000Z"),
    memberships: [new TenantMember({ tenant: alpha.tenant, member: annInAlpha }), new TenantMember({ tenant: zeta.tenant, member: zeta.admin })],
    ssoOnlyTenantIds: []
  })
  return { ann, bob: bob.admin, zeta }
})

describe("checkSignIn", () => {
  it.effect("answers the account of a right password with its active memberships, ordered by tenant slug, the removed one left out", () =>
    Effect.gen(function*() {
      const { ann } = yield* people
      expect(ann.memberships.map(({ member, tenant }) => [tenant.slug, member.arbRole, member.source])).toEqual([
        ["alpha", "architect", "INVITATION"],
        ["zeta", "tenant-admin", "SIGNUP"]
      ])
      expect(yield* signIn("Ann@Example.com", password)).toEqual(new SignInCheck({ account: ann }))
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("compares the e-mail case-insensitively and without the spaces around it", () =>
    Effect.gen(function*() {
      const { ann } = yield* people
      expect(yield* signIn("aNN@EXAMPLE.com", password)).toEqual(new SignInCheck({ account: ann }))
      expect(yield* signIn(" ann@example.com ", password)).toEqual(new SignInCheck({ account: ann }))
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("answers a null account, alike, for a wrong password, an unknown e-mail and an account without a password", () =>
    Effect.gen(function*() {
      const { bob } = yield* people
      const nobody = new SignInCheck({ account: null })
      expect(yield* signIn("ann@example.com", `${password}!`)).toEqual(nobody)
      expect(yield* signIn("ann@example.com", password.toUpperCase())).toEqual(nobody)
      expect(yield* signIn("carol@example.com", password)).toEqual(nobody)
      expect(bob.userEmail).toBe("bob@example.com")
      expect(yield* signIn("bob@example.com", password)).toEqual(nobody)
      expect(yield* signIn("bob@example.com", "")).toEqual(nobody)
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("answers an account whose memberships were all removed, with none", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-07-01T09:00:00.000Z"))
      const solo = yield* tenantWithAdmin("solo")
      yield* createInvitation(solo.caller, invite("leaver@example.com", "viewer"))
      const leaver = yield* acceptMailTo("leaver@example.com")
      yield* removeMember(solo.caller, leaver.userSub)
      expect(yield* signIn("leaver@example.com", password)).toEqual(
        new SignInCheck({ account: new MemberAccount({
          subject: leaver.userSub,
          email: "leaver@example.com",
          passwordSetAt: DateTime.makeUnsafe("2026-07-01T09:00:00.000Z"),
          memberships: [],
          ssoOnlyTenantIds: []
        }) })
      )
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("answers UNAVAILABLE when the identity provider is down, and logs no password", () => {
    const lines: Array<string> = []
    return Effect.gen(function*() {
      yield* people
      const store = yield* MemoryStore
      yield* Ref.update(store, (s) => ({ ...s, identityDown: true }))
      const refused = yield* Effect.flip(signIn("ann@example.com", password))
      expect(refused).toMatchObject({ _tag: "Unavailable", errorCode: "UNAVAILABLE" })
      expect(JSON.stringify(refused)).not.toContain(password)
      expect(lines.some((line) => line.includes("identity provider unavailable"))).toBe(true)
      expect(lines.filter((line) => line.includes(password))).toEqual([])
    }).pipe(Effect.provide(Layer.merge(MemoryLayer(), captureLogs(lines))))
  })
})

describe("getAccount", () => {
  it.effect("answers the account of a subject as a sign-in does, and a removal at once", () =>
    Effect.gen(function*() {
      const { ann, zeta } = yield* people
      expect(yield* getAccount(ann.subject)).toEqual(ann)
      yield* createInvitation(zeta.caller, invite("second@example.com", "tenant-admin"))
      const second = yield* acceptMailTo("second@example.com")
      yield* removeMember(adminOf(zeta.tenant.id, second.userSub), ann.subject)
      expect((yield* getAccount(ann.subject)).memberships.map(({ tenant }) => tenant.slug)).toEqual(["alpha"])
      expect(yield* signIn("ann@example.com", password)).toEqual(new SignInCheck({ account: yield* getAccount(ann.subject) }))
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("answers an account without a password too, and NotFound for a subject of no account", () =>
    Effect.gen(function*() {
      const { bob } = yield* people
      const account = yield* getAccount(bob.userSub)
      expect(account.memberships.map(({ tenant }) => tenant.slug)).toEqual(["bobco"])
      expect(account.passwordSetAt).toBeNull()
      expect(yield* Effect.flip(getAccount("00000000-0000-4000-8000-000000000000"))).toMatchObject({
        _tag: "NotFound",
        detail: "No account with this subject."
      })
      // An SSO member's userSub names a membership, not an account of the built-in provider.
      expect(yield* Effect.flip(getAccount("oidc|7"))).toMatchObject({ _tag: "NotFound" })
    }).pipe(Effect.provide(MemoryLayer())))

  it.effect("answers UNAVAILABLE when the identity provider is down", () =>
    Effect.gen(function*() {
      const { ann } = yield* people
      yield* Ref.update(yield* MemoryStore, (s) => ({ ...s, identityDown: true }))
      expect(yield* Effect.flip(getAccount(ann.subject))).toMatchObject({ _tag: "Unavailable" })
    }).pipe(Effect.provide(MemoryLayer())))
})
