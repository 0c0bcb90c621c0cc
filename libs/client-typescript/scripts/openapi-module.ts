import { readFileSync } from "node:fs"
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from "openapi-typescript"

/** The committed contract the SDK is generated from. */
export const openApiPath = new URL("../../domain/openapi.json", import.meta.url)
/** Where the generated module lives; committed so that a clean checkout type-checks without a build. */
export const generatedPath = new URL("../src/generated/openapi.ts", import.meta.url)

const methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const

/**
 * The text of `src/generated/openapi.ts`: openapi-typescript's types of the whole document, then the
 * route of each operation (HTTP method and path template), so that the SDK sends the paths of the
 * contract rather than copies of them.
 */
export const generateOpenApiModule = async (): Promise<string> => {
  const document = JSON.parse(readFileSync(openApiPath, "utf8")) as OpenAPI3
  const types = astToString(await openapiTS(document, { silent: true }))
  const routes: Array<string> = []
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of methods) {
      const operation = (item as Record<string, { operationId?: string; "x-sdk"?: boolean } | undefined>)[method]
      // SCIM's operations (`x-sdk: false`) are for identity tools, not the SDK.
      if (operation === undefined || operation["x-sdk"] === false) continue
      if (typeof operation.operationId !== "string") throw new Error(`${method.toUpperCase()} ${path} has no operationId`)
      routes.push(`  ${JSON.stringify(operation.operationId)}: { method: ${JSON.stringify(method.toUpperCase())}, path: ${JSON.stringify(path)} }`)
    }
  }
  return [
    COMMENT_HEADER.trimEnd(),
    "// Generated from libs/domain/openapi.json by `npm run generate -w @architecture-portfolio/client`.",
    "",
    types.trimEnd(),
    "",
    "/** HTTP method and path template of every operation, by operationId. */",
    "export const routes = {",
    routes.join(",\n"),
    "} as const",
    ""
  ].join("\n")
}
