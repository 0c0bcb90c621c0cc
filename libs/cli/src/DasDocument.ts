import { DasContent, DasContentMaxBytes, InvalidRequest } from "@portfolio/domain"
import { Effect, FileSystem, Schema } from "effect"
import { describeSchemaError } from "./Failure.js"

/**
 * A content file is read only when it is at most this large (the services' body limit), so that a
 * wrong path never loads a huge file; its compact JSON must then be within `DasContentMaxBytes`,
 * the referential's own rule, checked here with the same schema before anything is created.
 */
export const DasFileMaxBytes = 1024 * 1024

const decode = Schema.decodeUnknownEffect(Schema.fromJsonString(DasContent))

export const parseDasContent = (text: string) =>
  decode(text).pipe(
    Effect.mapError((error) =>
      new InvalidRequest({
        detail: `The DAS content must be a JSON object of at most ${DasContentMaxBytes} bytes: ${describeSchemaError(error)}`
      })
    )
  )

export const readDasContent = (path: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const size = Number((yield* fs.stat(path)).size)
    if (size > DasFileMaxBytes) {
      return yield* new InvalidRequest({ detail: `${path} is ${size} bytes; a DAS content file is at most ${DasFileMaxBytes} bytes.` })
    }
    return yield* parseDasContent(yield* fs.readFileString(path))
  }).pipe(
    Effect.catchTag("PlatformError", (error) => Effect.fail(new InvalidRequest({ detail: `Cannot read ${path}: ${error.message}` })))
  )
