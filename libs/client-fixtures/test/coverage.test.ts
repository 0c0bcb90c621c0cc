import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { operations as typescriptOperations } from "../../client-typescript/src/index.js"

/**
 * Adding an endpoint to the contract without both SDKs must fail the build: every operation of the
 * committed OpenAPI file needs a method in each SDK and at least one shared contract case.
 */
const root = fileURLToPath(new URL("../../../", import.meta.url))
const openapi = JSON.parse(readFileSync(`${root}libs/domain/openapi.json`, "utf8"))
const methods = ["get", "put", "post", "delete", "patch", "head", "options"]
const contractOperations: Array<string> = Object.values(openapi.paths as Record<string, Record<string, any>>)
  // SCIM's operations (`x-sdk: false`) are for identity tools, not the SDKs.
  .flatMap((item) => methods.filter((method) => item[method] !== undefined && item[method]["x-sdk"] !== false).map((method) => item[method].operationId as string))
const cases: Array<any> = JSON.parse(readFileSync(`${root}libs/client-fixtures/cases.json`, "utf8")).cases

const python = process.env.PORTFOLIO_PYTHON ?? "/usr/bin/python3"

const pythonOperations = (): Record<string, [string, string]> =>
  JSON.parse(execFileSync(python, ["-c", "import json, architecture_portfolio as p; print(json.dumps(p.OPERATIONS))"], {
    cwd: root,
    env: { ...process.env, PYTHONPATH: `${root}libs/client-python/src` },
    encoding: "utf8"
  }))

describe("the contract and both SDKs cover the same operations", () => {
  it("reads fifteen operations or more from openapi.json, each with an operationId", () => {
    expect(contractOperations.length).toBeGreaterThanOrEqual(15)
    expect(contractOperations.every((id) => typeof id === "string" && id.length > 0)).toBe(true)
  })

  it("has a shared contract case for every operation, and no case for an operation the contract lacks", () => {
    const covered = new Set(cases.map((c) => c.operationId).filter((id) => id !== null))
    expect(contractOperations.filter((id) => !covered.has(id))).toEqual([])
    expect([...covered].filter((id) => !contractOperations.includes(id))).toEqual([])
  })

  it("gives every case a unique name", () => {
    const names = cases.map((c) => c.name)
    expect(new Set(names).size).toBe(names.length)
  })

  it("implements every operation in the TypeScript SDK, and nothing beyond the contract", () => {
    expect(Object.keys(typescriptOperations).sort()).toEqual([...contractOperations].sort())
  })

  it("implements every operation in the Python SDK, under the snake_case name of the TypeScript method", () => {
    const fromPython = pythonOperations()
    expect(Object.keys(fromPython).sort()).toEqual([...contractOperations].sort())
    const snake = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)
    for (const id of contractOperations) {
      const ts = (typescriptOperations as Record<string, { resource: string; method: string }>)[id]!
      expect(fromPython[id], id).toEqual([ts.resource, snake(ts.method)])
    }
  })
})
