import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, type LogLevel, Result } from "effect"
import { logLevelConfig } from "../../src/http/Server.js"

const read = (value: string) =>
  Effect.runSync(Effect.result(Effect.provideService(logLevelConfig("LOG_LEVEL"), ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown({ LOG_LEVEL: value }))))

describe("LOG_LEVEL", () => {
  it("takes Effect's level names and labels alike, in any case, as the chart and docs/observability.md offer them", () => {
    const cases: ReadonlyArray<readonly [string, LogLevel.LogLevel]> = [
      ["All", "All"],
      ["trace", "Trace"],
      ["DEBUG", "Debug"],
      ["Info", "Info"],
      ["Warning", "Warn"],
      ["WARN", "Warn"],
      ["warn", "Warn"],
      ["Error", "Error"],
      ["Fatal", "Fatal"],
      ["None", "None"],
      ["OFF", "None"],
      [" info ", "Info"]
    ]
    for (const [value, level] of cases) expect({ value, level: read(value) }).toEqual({ value, level: Result.succeed(level) })
  })

  it("refuses anything else, naming what it takes", () => {
    const result = read("verbose")
    expect(Result.isFailure(result)).toBe(true)
    const message = String(Result.isFailure(result) ? result.failure : "")
    expect(message).toContain('"verbose"')
    expect(message).toContain("Warning (WARN)")
    expect(message).toContain("None (OFF)")
  })
})
