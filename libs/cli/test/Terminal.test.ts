import { isControlCharacter } from "@portfolio/domain"
import { Console, Effect } from "effect"
import fc from "fast-check"
import { readdirSync, readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { print } from "../src/Output.js"
import { terminalJson, terminalSafe } from "../src/Terminal.js"

const controlsIn = (text: string) => [...text].filter((c) => isControlCharacter(c.codePointAt(0)!))

/** Any text, controls and lone surrogates included. */
const anyText = fc.oneof(fc.string({ unit: "binary", maxLength: 40 }), fc.string({ maxLength: 40 }), fc.string({ unit: "grapheme", maxLength: 20 }))

/** Reads an escaped text back, as a person reading the screen would: the escapes are unambiguous. */
const unescape = (shown: string) =>
  shown.replace(/\\(?:x([0-9a-f]{2})|u([0-9a-f]{4})|(.))/g, (_, x: string | undefined, u: string | undefined, c: string) =>
    x !== undefined || u !== undefined ? String.fromCharCode(parseInt((x ?? u)!, 16)) : ({ t: "\t", n: "\n", r: "\r", "\\": "\\" } as Record<string, string>)[c]!)

describe("terminalSafe", () => {
  it("shows the C0 and C1 controls, DEL, the bidirectional characters and the line separators as escapes, a backslash doubled", () => {
    expect(terminalSafe("\u001b]0;pwned\u0007\u001b[31mattacker\u001b[0m")).toBe("\\x1b]0;pwned\\x07\\x1b[31mattacker\\x1b[0m")
    expect(terminalSafe("a\r\u001b[2K\u001b[1Ab\tc\nd\u0000")).toBe("a\\r\\x1b[2K\\x1b[1Ab\\tc\\nd\\x00")
    expect(terminalSafe("\u007f\u0080\u0085\u009b\u009f")).toBe("\\x7f\\x80\\x85\\x9b\\x9f")
    expect(terminalSafe("\u061c\u200e\u200f\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"))
      .toBe("\\u061c\\u200e\\u200f\\u2028\\u2029\\u202a\\u202b\\u202c\\u202d\\u202e\\u2066\\u2067\\u2068\\u2069")
    // The four characters `\x1b` typed by someone are not the escape of ESC.
    expect(terminalSafe("C:\\temp \\x1b")).toBe("C:\\\\temp \\\\x1b")
  })

  it("leaves everything else as it is: letters of any script, emoji and their joiners, the same string when nothing needs escaping", () => {
    for (const text of ["Équipe Café — 日本語 العربية עברית", "👩‍💻 🇫🇷", "https://hooks.acme.example/in?x=1", ""]) {
      expect(terminalSafe(text)).toBe(text)
    }
  })

  it("never lets a control character through, and can be read back exactly", () => {
    fc.assert(fc.property(anyText, (text) => {
      const shown = terminalSafe(text)
      expect(controlsIn(shown)).toEqual([])
      expect(unescape(shown)).toBe(text)
    }), { numRuns: 500 })
  })
})

describe("terminalJson", () => {
  it("is the same JSON value, with no control character left in its text", () => {
    fc.assert(fc.property(fc.oneof(fc.jsonValue(), fc.dictionary(anyText, anyText)), (value) => {
      const text = terminalJson(value)
      expect(controlsIn(text)).toEqual([])
      expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)))
    }), { numRuns: 500 })
    expect(terminalJson({ e: "\u001b[31m\u009b\u202e" })).toBe("{\"e\":\"\\u001b[31m\\u009b\\u202e\"}")
    expect(terminalJson({ a: 1 }, 2)).toBe("{\n  \"a\": 1\n}")
  })
})

describe("print, the one writer of every command", () => {
  const printed = (json: boolean) => {
    const lines: Array<string> = []
    const captured: Console.Console = { ...Effect.runSync(Console.Console), log: (...parts) => void lines.push(parts.join(" ")) }
    Effect.runSync(print({ json: { justification: "x\r\u001b[1A" }, human: ["one", "x\r\u001b[1A"] }, json).pipe(Effect.provideService(Console.Console, captured)))
    return lines.join("\n")
  }

  it("escapes the lines for a person, and keeps the exact string in --json", () => {
    expect(printed(false)).toBe("one\nx\\r\\x1b[1A")
    expect(JSON.parse(printed(true))).toEqual({ justification: "x\r\u001b[1A" })
  })

  it("is the only way to the console: no other module of the CLI writes there", () => {
    const dir = new URL("../src/", import.meta.url)
    const writers = readdirSync(dir)
      .filter((file) => file.endsWith(".ts") && file !== "Terminal.ts")
      .filter((file) => /\bConsole\.(log|error|info|warn|debug)\b|\bconsole\.(log|error|info|warn|debug)\b|process\.std(out|err)/.test(readFileSync(new URL(file, dir), "utf8")))
    expect(writers).toEqual([])
  })
})
