import { ApplicationCode, ApplicationInput, InvalidRequest } from "@portfolio/domain"
import { Effect, Schema } from "effect"
import { describeSchemaError } from "./Failure.js"

/** The JSON `portfolio app put` reads: the application's `code` beside the fields of the PUT body. */
const ApplicationDocumentSchema = Schema.fromJsonString(Schema.Struct({ code: ApplicationCode, ...ApplicationInput.fields }))

/**
 * Unknown fields are refused rather than dropped, so that a misspelt field (`regulation` for
 * `regulations`) is reported instead of silently leaving the value unchanged.
 */
export const parseApplicationDocument = (text: string) =>
  Schema.decodeUnknownEffect(ApplicationDocumentSchema)(text, { onExcessProperty: "error", errors: "all" }).pipe(
    Effect.map(({ code, ...fields }) => ({ code, application: new ApplicationInput(fields) })),
    Effect.mapError(
      (error) => new InvalidRequest({ detail: `The application document is not valid: ${describeSchemaError(error)}` })
    )
  )
