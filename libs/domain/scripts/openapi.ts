/**
 * `npm run openapi`: writes libs/domain/openapi.json, the public contract as a file (README,
 * "The contract as a file"). Committed, so that every change of the contract shows in review and
 * reaches both client libraries; libs/domain/test/openapi-file.test.ts fails while it differs from what
 * the contract produces.
 */
import { writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { publishedOpenApiText } from "../src/OpenApiDocument.js"

const target = fileURLToPath(new URL("../openapi.json", import.meta.url))
writeFileSync(target, publishedOpenApiText())
process.stdout.write(`wrote ${target}\n`)
