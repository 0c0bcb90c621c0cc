import { HttpServerResponse } from "effect/http"
import { type ContentCoding, preferredCoding } from "@portfolio/platform/http"
import { Effect } from "effect"
import { existsSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { dirname, join } from "node:path"

/** What `npm run build` writes beside the gateway's bundle (deploy/build/build.ts), with its `.gz` and `.br` forms. */
const ScriptFile = "api-reference.js"

/** Browsers keep it for a day: it changes only with the product's version, which the page's URL does not name. */
const contentType = "text/javascript; charset=utf-8"
const headers = {
  "cache-control": "public, max-age=86400",
  "x-content-type-options": "nosniff",
  vary: "accept-encoding"
}

/**
 * The API reference's script (Scalar's standalone bundle, 3.3 MB, 0.8 MB in br), served as a
 * file of its own rather than inline in the page. Compiled, it is read from the files beside the
 * bundle at each request, in the coding the request prefers: the gateway holds none of it in
 * memory (docs/architecture.md#memory). Run from its sources (`npm start`), there is no build
 * output: the script is taken from the platform's own reference page, held as it is.
 */
export const makeReferenceScript = Effect.promise(async () => {
  const bundleDir = dirname(process.argv[1] ?? "")
  if (existsSync(join(bundleDir, ScriptFile))) {
    const fileOf = (coding: ContentCoding | "identity") => join(bundleDir, coding === "identity" ? ScriptFile : `${ScriptFile}.${coding === "br" ? "br" : "gz"}`)
    return (acceptEncoding: string | undefined) => {
      const coding = preferredCoding(acceptEncoding)
      return Effect.map(
        Effect.promise(() => readFile(fileOf(coding))),
        (body) => HttpServerResponse.uint8Array(body, { contentType, headers: coding === "identity" ? headers : { ...headers, "content-encoding": coding } })
      )
    }
  }
  // A specifier the bundler does not follow: the module holds the 3.3 MB script as a literal, which
  // would otherwise be compiled into the gateway's bundle and kept in its memory.
  const fromSources = "./ScalarScript.js"
  const { scalarStandaloneScript } = (await import(fromSources)) as typeof import("./ScalarScript.js")
  const response = HttpServerResponse.text(await scalarStandaloneScript(), { contentType, headers })
  return (_acceptEncoding: string | undefined) => Effect.succeed(response)
})

