import { writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { generatedPath, generateOpenApiModule } from "./openapi-module.js"

writeFileSync(generatedPath, await generateOpenApiModule())
console.warn(`wrote ${fileURLToPath(generatedPath)}`)
