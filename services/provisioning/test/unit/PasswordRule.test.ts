import { describe, expect, it } from "@effect/vitest"
import { Option } from "effect"
import { commonPasswords } from "../../src/domain/CommonPasswords.js"
import { PasswordMaxLength, PasswordMinLength, passwordRefusal } from "../../src/domain/PasswordRule.js"

const context = { email: "Ana.Lopez@Example.com", tenantSlug: "acme-corp" }
const refusal = (password: string) => Option.getOrUndefined(passwordRefusal(password, context))

const blank = "The password cannot be only spaces or other invisible characters."
const common = /list of common passwords/
const runs = /repeated or sequential characters/
const contextual = /words from your invitation/

describe("the password rule (NIST SP 800-63B)", () => {
  it("counts Unicode code points after NFKC: 6 emoji are 6 characters, 12 are enough", () => {
    expect(refusal("🔑🌍🚲🎻🍋🐙")).toBe(
      "The password is too short: it has 6 characters and needs at least 12. Every letter, digit, space or emoji counts as one."
    )
    expect(refusal("🔑🌍🚲🎻🍋🐙🔑🌍🚲🎻🍋🦀")).toBeUndefined()
    expect(refusal("")).toMatch(/it has 0 characters/)
    expect(refusal("x")).toMatch(/it has 1 character and/)
  })

  it("judges NFKC-equivalent forms alike: composed and decomposed accents, full-width and ligature letters", () => {
    const composed = "café crème brûlée"
    const decomposed = composed.normalize("NFD")
    expect(decomposed.length).toBeGreaterThan(composed.length)
    expect([refusal(composed), refusal(decomposed)]).toEqual([undefined, undefined])
    // 11 characters once normalised, however many code points were typed.
    expect(refusal("e\u0301".repeat(11))).toMatch(/it has 11 characters/)
    // Full-width and ligature forms are the listed password itself; "ﬁ" is typed as one, counts as two.
    expect(refusal("ｌｅａｖｅｍｅａｌｏｎｅ")).toMatch(common)
    expect(refusal("ﬁnalfantasy")).toMatch(common)
    expect(refusal("ﬁnalfantasy!")).toBeUndefined()
  })

  it(`keeps the maximum of ${PasswordMaxLength} characters, counted the same way`, () => {
    const words = "lantern orchard velvet quarry "
    const longest = words.repeat(9).slice(0, PasswordMaxLength)
    expect(refusal(longest)).toBeUndefined()
    expect(refusal(`${longest}x`)).toBe(`The password is too long: it has ${PasswordMaxLength + 1} characters and may have at most ${PasswordMaxLength}.`)
    expect(refusal("🦀".repeat(PasswordMaxLength - 6) + "orchid")).toBeUndefined()
  })

  it("refuses passwords of whitespace or invisible characters only", () => {
    for (const password of [" ".repeat(12), "\t".repeat(12), "\u00a0".repeat(12), "\u3000".repeat(12), "\u200b".repeat(12), " \n".repeat(8)]) {
      expect(refusal(password)).toBe(blank)
    }
    expect(refusal(`${" ".repeat(11)}x`)).not.toBe(blank)
  })

  it("refuses the shipped common passwords in any case, with or without spaces", () => {
    expect(commonPasswords.size).toBeGreaterThan(300)
    for (const password of ["1qaz2wsx3edc", "LeaveMeAlone", "FINALFANTASY", "Leave Me Alone", "administrator", "justinbieber"]) {
      expect(refusal(password), password).toMatch(common)
    }
    expect(refusal("leave me alone, please")).toBeUndefined()
    // Listed, and a run too: the list speaks first.
    expect(refusal("123456789012")).toMatch(common)
  })

  it("ships the list normalised as the rule compares it: NFKC, lower case, 12 characters or more", () => {
    expect(commonPasswords.size).toBe(308)
    for (const entry of commonPasswords) {
      expect(entry).toBe(entry.normalize("NFKC").toLowerCase())
      expect(Array.from(entry).length).toBeGreaterThanOrEqual(PasswordMinLength)
    }
  })

  it("refuses repeated and sequential characters, ascending or descending, spaces ignored", () => {
    for (const password of [
      "aaaaaaaaaaaa",
      "345678901234",
      "abcdefghijkl",
      "zyxwvutsrqpo",
      "098765432109",
      "qwertyuiopas",
      "4567 8901 2345",
      "aaaabbbbcccc",
      "abcd1234wxyz",
      "abcabcabcabc",
      "sunshinesunshine",
      "ΑΒΓΔΕΖΗΘΙΚΛΜ"
    ]) {
      expect(refusal(password), password).toMatch(runs)
    }
    // A run inside a passphrase is fine, and so is a password long enough on its own typed twice.
    expect(refusal("abcd is my favourite song")).toBeUndefined()
    expect(refusal("Xk9#mQ2$pL7!Xk9#mQ2$pL7!")).toBeUndefined()
  })

  it("refuses what is mostly the product's name, the workspace's name or the invitee's address", () => {
    for (const password of [
      "Architecture Portfolio",
      "portfolio2026!",
      "acme-corp-2026",
      "AcmeCorp123!",
      "Ana.Lopez@Example.com",
      "ana.lopez 2026!",
      "AnaLopez12345"
    ]) {
      expect(refusal(password), password).toMatch(contextual)
    }
    expect(refusal("portfolio of my favourite songs")).toBeUndefined()
    // A local part of two letters strikes out nothing: it would cut syllables of ordinary words.
    expect(Option.isNone(passwordRefusal("jo jo gets a new bike", { email: "jo@example.com", tenantSlug: "xy" }))).toBe(true)
  })

  it("accepts a long passphrase, with no rule about digits, capitals or symbols", () => {
    for (const password of ["correct horse battery staple", "tout le monde aime les crêpes", "мой пароль из слов", "ＬＯＮＧ　ｐａｓｓｐｈｒａｓｅ ok"]) {
      expect(refusal(password), password).toBeUndefined()
    }
  })
})
