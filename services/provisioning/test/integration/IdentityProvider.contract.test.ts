import { expect, layer } from "@effect/vitest"
import { DateTime, Effect, Option, Redacted } from "effect"
import { IdentityProvider } from "../../src/ports/IdentityProvider.js"
import { adaptersUnderTest, StorageProbe } from "../support/AdaptersUnderTest.js"

for (const adapters of adaptersUnderTest) {
  layer(adapters.layer, { timeout: 60_000, excludeTestServices: true })(`IdentityProvider contract, ${adapters.name}`, (it) => {
    it.effect("keeps one account per e-mail, compared case-insensitively, with the first spelling and a subject that never changes", () =>
      Effect.gen(function*() {
        const identity = yield* IdentityProvider
        const ann = yield* identity.ensureAccount("Ann@Example.com")
        expect(ann.email).toBe("Ann@Example.com")
        expect(yield* identity.ensureAccount("ann@example.COM")).toEqual(ann)
        const bob = yield* identity.ensureAccount("bob@example.com")
        expect(bob.subject).not.toBe(ann.subject)
      }))

    it.effect("tells whether the account has a password: none when created, one once set", () =>
      Effect.gen(function*() {
        const identity = yield* IdentityProvider
        const dan = yield* identity.ensureAccount("Dan@Example.com")
        expect(dan).toEqual({ subject: dan.subject, email: "Dan@Example.com", hasPassword: false, passwordSetAt: null })
        expect((yield* identity.ensureAccount("dan@example.com")).hasPassword).toBe(false)
        yield* identity.setPassword(dan.subject, Redacted.make("a password for dan"))
        expect(yield* identity.ensureAccount("DAN@example.com")).toEqual({ ...dan, hasPassword: true, passwordSetAt: expect.anything() })
      }))

    it.effect("sets an account's password, replaces it, and keeps it when the account is ensured again", () =>
      Effect.gen(function*() {
        const identity = yield* IdentityProvider
        const probe = yield* StorageProbe
        const { subject } = yield* identity.ensureAccount("carol@example.com")
        expect(yield* probe.passwordIs(subject, "the first password")).toBe(false)
        yield* identity.setPassword(subject, Redacted.make("the first password"))
        expect(yield* probe.passwordIs(subject, "the first password")).toBe(true)
        yield* identity.ensureAccount("Carol@example.com")
        expect(yield* probe.passwordIs(subject, "the first password")).toBe(true)
        yield* identity.setPassword(subject, Redacted.make("the second password"))
        expect(yield* probe.passwordIs(subject, "the second password")).toBe(true)
        expect(yield* probe.passwordIs(subject, "the first password")).toBe(false)
      }))

    it.effect("verifies a password: the account for the right one and an e-mail in any case, none for anything else", () =>
      Effect.gen(function*() {
        const identity = yield* IdentityProvider
        const erin = yield* identity.ensureAccount("Erin@Example.com")
        const right = Redacted.make("erin's first password")
        expect(yield* identity.verifyPassword("erin@example.com", right)).toEqual(Option.none())
        yield* identity.setPassword(erin.subject, right)
        const found = Option.some({ ...erin, hasPassword: true, passwordSetAt: expect.anything() })
        expect(yield* identity.verifyPassword("Erin@Example.com", right)).toEqual(found)
        expect(yield* identity.verifyPassword("ERIN@example.COM", right)).toEqual(found)
        expect(yield* identity.verifyPassword("erin@example.com", Redacted.make("erin's first password "))).toEqual(Option.none())
        expect(yield* identity.verifyPassword("erin@example.com", Redacted.make("ERIN'S FIRST PASSWORD"))).toEqual(Option.none())
        expect(yield* identity.verifyPassword("nobody@example.com", right)).toEqual(Option.none())
        // Another account's password opens only that account.
        const fay = yield* identity.ensureAccount("fay@example.com")
        yield* identity.setPassword(fay.subject, Redacted.make("fay's own password"))
        expect(yield* identity.verifyPassword("erin@example.com", Redacted.make("fay's own password"))).toEqual(Option.none())
        // A replaced password no longer works.
        yield* identity.setPassword(erin.subject, Redacted.make("erin's second password"))
        expect(yield* identity.verifyPassword("erin@example.com", right)).toEqual(Option.none())
        expect(yield* identity.verifyPassword("erin@example.com", Redacted.make("erin's second password"))).toEqual(found)
      }))

    it.effect("finds an account by its subject, with or without a password; none for any other subject", () =>
      Effect.gen(function*() {
        const identity = yield* IdentityProvider
        const gus = yield* identity.ensureAccount("Gus@Example.com")
        expect(yield* identity.findAccount(gus.subject)).toEqual(Option.some(gus))
        yield* identity.setPassword(gus.subject, Redacted.make("gus's password"))
        expect(yield* identity.findAccount(gus.subject)).toEqual(Option.some({ ...gus, hasPassword: true, passwordSetAt: expect.anything() }))
        expect(yield* identity.findAccount("00000000-0000-4000-8000-000000000000")).toEqual(Option.none())
        expect(yield* identity.findAccount("oidc|7")).toEqual(Option.none())
        expect(yield* identity.findAccount(gus.email)).toEqual(Option.none())
      }))

    it.effect("records when the password was last set, each time it is set, and answers it wherever it answers the account", () =>
      Effect.gen(function*() {
        const identity = yield* IdentityProvider
        const ivy = yield* identity.ensureAccount("Ivy@Example.com")
        expect(ivy.passwordSetAt).toBeNull()
        const before = DateTime.makeUnsafe(Date.now() - 1000)
        yield* identity.setPassword(ivy.subject, Redacted.make("ivy's first password"))
        const first = Option.getOrThrow(yield* identity.findAccount(ivy.subject)).passwordSetAt
        expect(first).not.toBeNull()
        expect(DateTime.between(first!, { minimum: before, maximum: DateTime.makeUnsafe(Date.now() + 1000) })).toBe(true)
        expect(Option.getOrThrow(yield* identity.findAccountByEmail("ivy@example.com")).passwordSetAt).toEqual(first)
        expect(Option.getOrThrow(yield* identity.verifyPassword("ivy@example.com", Redacted.make("ivy's first password"))).passwordSetAt).toEqual(first)
        expect((yield* identity.ensureAccount("IVY@example.com")).passwordSetAt).toEqual(first)
        yield* Effect.sleep("20 millis")
        yield* identity.setPassword(ivy.subject, Redacted.make("ivy's second password"))
        const second = Option.getOrThrow(yield* identity.findAccount(ivy.subject)).passwordSetAt
        expect(DateTime.isGreaterThan(second!, first!)).toBe(true)
      }))

    it.effect("finds an account by its e-mail in any case, never creating one", () =>
      Effect.gen(function*() {
        const identity = yield* IdentityProvider
        const hal = yield* identity.ensureAccount("Hal@Example.com")
        expect(yield* identity.findAccountByEmail("hal@example.COM")).toEqual(Option.some(hal))
        expect(yield* identity.findAccountByEmail("nobody-yet@example.com")).toEqual(Option.none())
        // Looking did not create it: ensuring it now makes a new account, without a password.
        const created = yield* identity.ensureAccount("nobody-yet@example.com")
        expect(created.hasPassword).toBe(false)
        expect(yield* identity.findAccountByEmail("nobody-yet@example.com")).toEqual(Option.some(created))
      }))
  })
}
