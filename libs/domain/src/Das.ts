import { Schema } from "effect"
import { ApplicationCode } from "./Application.js"
import { InputText, withoutControls } from "./Text.js"
import { DateTimeUtc, Uuid } from "./Wire.js"

/** The largest DAS content: its compact JSON text, in UTF-8 bytes (docs/product-rules.md#referential). */
export const DasContentMaxBytes = 64 * 1024

/**
 * A JSON escape PostgreSQL's jsonb refuses (U+0000, or half of a surrogate pair), not preceded by
 * an escaped backslash: found on the compact text so that such content is a 400, not a failed insert.
 */
const unstorableEscape = /(?<!\\)(?:\\\\)*\\u(?:0000|d[89a-f][0-9a-f]{2}(?!\\ud[c-f][0-9a-f]{2}))/i
const loneLowSurrogate = /(?<!\\ud[89ab][0-9a-f]{2})\\ud[c-f][0-9a-f]{2}/i

const contentProblem = (content: { readonly [key: string]: unknown }): string | undefined => {
  const text = JSON.stringify(content)
  if (new TextEncoder().encode(text).length > DasContentMaxBytes) return `must be at most ${DasContentMaxBytes} bytes of JSON`
  if (unstorableEscape.test(text) || loneLowSurrogate.test(text)) return "must not contain U+0000 or an unpaired surrogate"
  return undefined
}

/** The free-form body of a DAS: a JSON object (never an array, a string or null), bounded in size. */
export const DasContent = Schema.Record(Schema.String, Schema.Unknown).check(
  Schema.makeFilter((content) => contentProblem(content) ?? true, {
    identifier: "DasContent",
    description: `A JSON object, at most ${DasContentMaxBytes} bytes as compact JSON.`,
    // The size rule, which JSON Schema cannot carry: the document states it in words.
    toJsonSchema: () => ({ type: "object", description: `A JSON object, at most ${DasContentMaxBytes} bytes as compact JSON.` })
  })
)
export type DasContent = typeof DasContent.Type

export const DasId = Uuid.annotate({ identifier: "DasId" })

export const DasStatus = Schema.Literals(["DRAFT", "SUBMITTED"]).annotate({
  description: "DRAFT when created; SUBMITTED once, for good."
})
export type DasStatus = typeof DasStatus.Type

export const DasTitle = InputText.pipe(
  Schema.check(Schema.isTrimmed({ message: "must not start or end with whitespace" })),
  Schema.check(Schema.isMinLength(1)),
  Schema.check(Schema.isMaxLength(200)),
  Schema.annotate({ identifier: "DasTitle", description: "1 to 200 characters." })
)

/** A "dossier d'architecture" of an application: a tenant may hold several per application. */
export class Das extends Schema.Class<Das>("Das")({
  id: DasId,
  applicationCode: ApplicationCode,
  title: DasTitle,
  content: Schema.NullOr(DasContent),
  status: DasStatus,
  createdAt: DateTimeUtc,
  submittedBy: Schema.NullOr(Schema.String).annotate({ description: "Who submitted it; null while DRAFT." }),
  submittedAt: Schema.NullOr(DateTimeUtc).annotate({ description: "When it was submitted; null while DRAFT." })
}) {}

/**
 * The body of the admin API's creation of a DAS (as DRAFT). A new title is one line without control
 * characters; a DAS read back keeps the title it was stored with (`Das`).
 */
export class DasInput extends Schema.Class<DasInput>("DasInput")({
  applicationCode: ApplicationCode,
  title: DasTitle.pipe(withoutControls({ lineBreaks: false })),
  content: Schema.optionalKey(Schema.NullOr(DasContent))
}) {}
