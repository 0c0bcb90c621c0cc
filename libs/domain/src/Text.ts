import { Schema } from "effect"

/**
 * Text accepted from callers. PostgreSQL `text` cannot hold U+0000, so a NUL character is refused
 * at the edge as a 400 instead of failing later as a storage error.
 */
export const InputText = Schema.String.check(
  Schema.makeFilter((s) => !s.includes("\u0000") || "must not contain the NUL character (U+0000)")
)

/**
 * The characters a terminal or a text view acts on instead of showing (docs/security.md, "Control
 * characters"): the C0 controls (U+0000-U+001F: ESC, CR, BEL...), DEL (U+007F), the C1 controls
 * (U+0080-U+009F), the bidirectional formatting characters (U+061C, U+200E, U+200F, U+202A-U+202E,
 * U+2066-U+2069) and the line and paragraph separators (U+2028, U+2029). The contract refuses them
 * in free text (`withoutControls`), and the CLI shows them escaped.
 */
export const isControlCharacter = (codePoint: number): boolean =>
  codePoint <= 0x1f ||
  (codePoint >= 0x7f && codePoint <= 0x9f) ||
  codePoint === 0x061c ||
  codePoint === 0x200e ||
  codePoint === 0x200f ||
  (codePoint >= 0x2028 && codePoint <= 0x202e) ||
  (codePoint >= 0x2066 && codePoint <= 0x2069)

const codePointName = (codePoint: number) => `U+${codePoint.toString(16).toUpperCase().padStart(4, "0")}`

/**
 * The first character `text` may not hold, named with its place (from 1, in characters), or
 * undefined. With `paragraphs`, admits tab, line feed, and carriage return followed by a line feed (a
 * browser sends a textarea's line breaks as CR LF).
 */
const forbiddenCharacter = (text: string, paragraphs: boolean): string | undefined => {
  let place = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.codePointAt(i)!
    place++
    if (code > 0xffff) {
      i++
      continue
    }
    if (!isControlCharacter(code)) continue
    if (paragraphs && (code === 0x09 || code === 0x0a || (code === 0x0d && text.charCodeAt(i + 1) === 0x0a))) continue
    return `${codePointName(code)} at character ${place}`
  }
  return undefined
}

/**
 * Refuses free text holding a character of `isControlCharacter`, with a 400 whose message names the
 * character and its place, never the text itself; the path of the 400 names the field. Without
 * `lineBreaks` (a name, a title, a reason, a description shown on one line) tab and line breaks are
 * refused too; with it (a justification, a long description) tab, line feed and CR LF are kept.
 * Apply it after any trimming, so that surrounding whitespace is trimmed rather than refused.
 */
export const withoutControls = (options: { readonly lineBreaks: boolean }) => <S extends Schema.Top & { readonly Type: string }>(self: S): S["Rebuild"] =>
  self.check(
    Schema.makeFilter<string>((text) => {
      const found = forbiddenCharacter(text, options.lineBreaks)
      return found === undefined ||
        (options.lineBreaks
          ? `must not contain control or bidirectional formatting characters other than tab and line breaks (found ${found})`
          : `must be one line without control or bidirectional formatting characters (found ${found})`)
    })
  )
