import { isControlCharacter } from "@portfolio/domain"
import { Console } from "effect"

/**
 * What the CLI writes on a terminal. Whatever it prints comes partly from others (a requester's
 * justification, an e-mail typed at a sign-in form, a webhook receiver's answer), and a terminal
 * acts on some characters instead of showing them: ESC starts sequences that retitle the window,
 * recolour, move the cursor or erase lines; CR returns to the start of a line to overwrite it; the
 * bidirectional formatting characters reorder what follows. So every line goes through
 * `terminalSafe` and every document through `terminalJson`, here and nowhere else
 * (docs/security.md, "Control characters"). No other module of the CLI writes to the console.
 */

const hex = (code: number, width: number) => code.toString(16).padStart(width, "0")

const Named: Readonly<Record<number, string>> = { 0x09: "\\t", 0x0a: "\\n", 0x0d: "\\r", 0x5c: "\\\\" }

/**
 * `text` with every character of `isControlCharacter` shown as an escape instead of acting: `\t`,
 * `\n`, `\r`, `\xHH` for the other C0 and C1 controls and DEL (ESC is `\x1b`), `\uHHHH` for the
 * bidirectional formatting characters and U+2028, U+2029. A backslash is doubled (`\\`), so that
 * `\x1b` on the screen always stands for the character ESC, never for the four characters a sender
 * typed to pass for it. Anything else, non-ASCII letters included, is kept as it is.
 */
export const terminalSafe = (text: string): string => {
  let safe = ""
  let from = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code !== 0x5c && !isControlCharacter(code)) continue
    safe += text.slice(from, i) + (Named[code] ?? (code <= 0xff ? `\\x${hex(code, 2)}` : `\\u${hex(code, 4)}`))
    from = i + 1
  }
  return from === 0 ? text : safe + text.slice(from)
}

/**
 * `value` as JSON whose text has no character of `isControlCharacter` either: `JSON.stringify`
 * already escapes the C0 controls but leaves DEL, the C1 controls and the bidirectional characters
 * as they are, so they are written `\u007f`, `\u009b`, `\u202e`. These can only stand inside JSON
 * strings, and a JSON reader reads the escape as the character itself: the document is the exact
 * same value, which `--json` promises.
 */
export const terminalJson = (value: unknown, indent?: number): string => {
  const text = JSON.stringify(value, null, indent)
  let safe = ""
  let from = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x7f || !isControlCharacter(code)) continue
    safe += `${text.slice(from, i)}\\u${hex(code, 4)}`
    from = i + 1
  }
  return from === 0 ? text : safe + text.slice(from)
}

/** Lines for a person, each made safe: the one way the CLI writes to stdout. */
export const writeLines = (lines: ReadonlyArray<string>) => Console.log(lines.map(terminalSafe).join("\n"))

/** Lines for a person on stderr (a usage error), each made safe. */
export const writeErrorLines = (lines: ReadonlyArray<string>) => Console.error(lines.map(terminalSafe).join("\n"))

/** A JSON document on stdout (`--json`), on one line. */
export const writeJson = (value: unknown) => Console.log(terminalJson(value))

/** A JSON document on stderr (a failure's problem), indented. */
export const writeJsonError = (value: unknown) => Console.error(terminalJson(value, 2))
