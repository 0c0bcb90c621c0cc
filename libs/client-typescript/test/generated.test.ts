import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { generatedPath, generateOpenApiModule } from "../scripts/openapi-module.js"

describe("src/generated/openapi.ts", () => {
  it("is what the generator makes of libs/domain/openapi.json now: after a change of the contract, run `npm run generate -w @architecture-portfolio/client`", async () => {
    const committed = readFileSync(generatedPath, "utf8")
    const fresh = await generateOpenApiModule()
    expect(committed === fresh, "src/generated/openapi.ts is out of date: run `npm run generate -w @architecture-portfolio/client`").toBe(true)
  })

  it("holds the types of the contract's schemas and operations", () => {
    const committed = readFileSync(generatedPath, "utf8")
    for (const name of ["Application", "BusinessFunction", "FunctionTreeNode", "PosiTreeNode", "ReferentialStats", "ChangeLogEntry", "Invitation", "Member", "Problem"]) {
      expect(committed).toMatch(new RegExp(`^ {8}${name}: \\{$`, "m"))
    }
    expect(committed).toContain('"invitations.createInvitation": {')
  })
})
