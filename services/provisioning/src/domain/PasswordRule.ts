import { Option } from "effect"
import { commonPasswords } from "./CommonPasswords.js"

// docs/product-rules.md#invitations-and-members: NIST SP 800-63B, length and a blocklist, no composition rules.
export const PasswordMinLength = 12
export const PasswordMaxLength = 256

/** What the invitation tells about the invitee, and so what an attacker who knows them would try first. */
export interface PasswordContext {
  readonly email: string
  readonly tenantSlug: string
}

const ProductNames = ["architecture portfolio", "architecture", "portfolio"]

/** Words shorter than this would strike out ordinary syllables of a passphrase. */
const ContextWordMinLength = 3

/** A run of repeated or sequential characters only counts from this length ("aaa", "abc", "321"). */
const RunMinLength = 3

// Orders beyond code points: digits and letters wrap ("7890", "xyza"), and a keyboard's rows follow each other.
const Orders = ["0123456789", "abcdefghijklmnopqrstuvwxyz", "qwertyuiopasdfghjklzxcvbnm"]

const fold = (text: string) => text.normalize("NFKC").toLowerCase()
const codePoints = (text: string) => Array.from(text)
const withoutSpaces = (text: string) => text.replace(/\s/gu, "")
// Invisible characters (zero-width spaces, joiners, controls) hide nothing more than spaces do.
const isBlank = (text: string) => /^[\s\p{Cc}\p{Cf}]*$/u.test(text)

/** Whether `next` follows `previous` at `step` (0: the same character) in code points or in one of the orders. */
const follows = (previous: string, next: string, step: -1 | 0 | 1) => {
  if (step === 0) return previous === next
  if (next.codePointAt(0)! - previous.codePointAt(0)! === step) return true
  return Orders.some((order) => {
    const from = order.indexOf(previous)
    return from !== -1 && order.indexOf(next) === (from + step + order.length) % order.length
  })
}

const runLengthAt = (chars: ReadonlyArray<string>, start: number) =>
  Math.max(...([-1, 0, 1] as const).map((step) => {
    let end = start + 1
    while (end < chars.length && follows(chars[end - 1]!, chars[end]!, step)) end++
    return end - start
  }))

/** Nothing but runs such as "aaaa", "abcd", "4321" or "qwer", one after the other. */
const onlyRuns = (chars: ReadonlyArray<string>) => {
  for (let start = 0; start < chars.length;) {
    const length = runLengthAt(chars, start)
    if (length < RunMinLength) return false
    start += length
  }
  return chars.length > 0
}

/** A password too short to be accepted, typed several times ("passwordpassword", "abcabcabcabc"). */
const repeatsShorterOne = (chars: ReadonlyArray<string>) => {
  for (let unit = 1; unit < PasswordMinLength && unit * 2 <= chars.length; unit++) {
    if (chars.length % unit === 0 && chars.every((char, i) => char === chars[i % unit])) return true
  }
  return false
}

const contextWords = ({ email, tenantSlug }: PasswordContext) => {
  const address = fold(email.trim())
  const localPart = address.slice(0, Math.max(0, address.lastIndexOf("@")))
  const slug = fold(tenantSlug)
  const words = [...ProductNames, address, localPart, ...localPart.split(/[.+_-]/), slug, ...slug.split("-")]
  return [...new Set(words)]
    .filter((word) => codePoints(word).length >= ContextWordMinLength)
    .sort((a, b) => b.length - a.length)
}

/** What is left of a password once every word an attacker knows from the invitation is struck out. */
const withoutContextWords = (folded: string, context: PasswordContext) =>
  contextWords(context).reduce((rest, word) => rest.split(word).join(""), folded)

const plural = (n: number) => (n === 1 ? "1 character" : `${n} characters`)

/**
 * Why a password is refused, in words for the person choosing it, or none when it is accepted.
 * Characters are counted as Unicode code points after NFKC, so that an emoji is one character and
 * text that looks the same is counted the same whatever the keyboard produced.
 */
export const passwordRefusal = (password: string, context: PasswordContext): Option.Option<string> => {
  const folded = fold(password)
  const length = codePoints(folded).length
  if (length < PasswordMinLength) {
    return Option.some(`The password is too short: it has ${plural(length)} and needs at least ${PasswordMinLength}. Every letter, digit, space or emoji counts as one.`)
  }
  if (length > PasswordMaxLength) {
    return Option.some(`The password is too long: it has ${plural(length)} and may have at most ${PasswordMaxLength}.`)
  }
  if (isBlank(folded)) return Option.some("The password cannot be only spaces or other invisible characters.")
  const compact = codePoints(withoutSpaces(folded))
  if (commonPasswords.has(folded) || commonPasswords.has(compact.join(""))) {
    return Option.some("This password is on a list of common passwords that attackers try first. Please choose another one.")
  }
  if (onlyRuns(compact) || repeatsShorterOne(compact)) {
    return Option.some("This password is only repeated or sequential characters (such as aaaa, abcd or 1234), which are easy to guess. Please choose another one.")
  }
  const rest = withoutContextWords(folded, context)
  if (codePoints(rest).length < PasswordMinLength || isBlank(rest)) {
    return Option.some(`This password is mostly words from your invitation (the product's name, the workspace's name or your e-mail address), which are easy to guess. Leaving those out, it needs at least ${PasswordMinLength} characters.`)
  }
  return Option.none()
}
