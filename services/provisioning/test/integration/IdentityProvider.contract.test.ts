import { expect, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
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
        expect(dan).toEqual({ subject: dan.subject, email: "Dan@Example.com", hasPassword: false })
        expect((yield* identity.ensureAccount("dan@example.com")).hasPassword).toBe(false)
        yield* identity.setPassword(dan.subject, Redacted.make("a password for dan"))
        expect(yield* identity.ensureAccount("DAN@example.com")).toEqual({ ...dan, hasPassword: true })
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
  })
}
