import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { publishedOpenApiText } from "../src/OpenApiDocument.js"

describe("libs/domain/openapi.json", () => {
  it("is exactly what the contract produces: after a change of the contract, run `npm run openapi` and commit the file", () => {
    const committed = readFileSync(new URL("../openapi.json", import.meta.url), "utf8")
    expect(committed === publishedOpenApiText(), "libs/domain/openapi.json is out of date: run `npm run openapi`").toBe(true)
  })

  it("is an OpenAPI 3.1 document of the public API, with the webhooks' events", () => {
    const document = JSON.parse(readFileSync(new URL("../openapi.json", import.meta.url), "utf8"))
    expect(document.openapi).toMatch(/^3\.1\./)
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(["/referentiel/applications", "/referentiel/applications/{code}", "/referentiel/functions"]))
    expect(Object.keys(document.webhooks)).toEqual(["application.created", "application.updated", "das.submitted"])
  })
})
