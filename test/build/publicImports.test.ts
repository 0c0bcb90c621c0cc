import { ESLint } from "eslint"
import { describe, expect, it } from "vitest"

/** The lint rule that keeps every import on a package's public entry points (eslint.config.js). */
const lint = async (code: string) => {
  const [result] = await new ESLint({ cwd: new URL("../..", import.meta.url).pathname }).lintText(code, { filePath: "services/gateway/src/adapters/http/Probe.ts" })
  return (result?.messages ?? []).filter((message) => message.ruleId === "no-restricted-imports" || message.ruleId === "no-restricted-syntax").length
}

describe("imports of a library's files outside its exports", () => {
  it("are refused, static or dynamic, scoped or not", async () => {
    expect(await lint(`import { javascript } from "@effect/platform/dist/esm/internal/httpApiScalar.js"\nexport const x = javascript\n`)).toBe(1)
    expect(await lint(`import * as internal from "effect/internal/effect"\nexport const x = internal\n`)).toBe(1)
    expect(await lint(`import * as sdk from "@opentelemetry/sdk-metrics/build/src/index.js"\nexport const x = sdk\n`)).toBe(1)
    expect(await lint(`export const x = await import("effect/dist/esm/Effect.js")\n`)).toBe(1)
  })

  it("leave public entry points and the project's own folders alone", async () => {
    expect(await lint(`import { HttpApiScalar } from "effect/http-api"\nimport { Effect } from "effect"\nexport const x = [HttpApiScalar, Effect]\n`)).toBe(0)
    expect(await lint(`import { serveApi } from "@portfolio/platform/http"\nimport { FreshDatabase } from "@portfolio/platform/testing"\nexport const x = [serveApi, FreshDatabase]\n`)).toBe(0)
    expect(await lint(`import { x as y } from "./internal/thing.js"\nexport const x = y\n`)).toBe(0)
  })
})
