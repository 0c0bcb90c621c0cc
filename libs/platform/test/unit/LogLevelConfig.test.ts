import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either, LogLevel } from "effect"
import { logLevelConfig } from "../../src/http/Server.js"

const read = (value: string) =>
  Effect.runSync(Effect.either(Effect.withConfigProvider(logLevelConfig("LOG_LEVEL"), ConfigProvider.fromMap(new Map([["LOG_LEVEL", value]])))))

describe("LOG_LEVEL", () => {
  it("takes Effect's level names and labels alike, in any case, as the chart and docs/observability.md offer them", () => {
    const cases: ReadonlyArray<readonly [string, LogLevel.LogLevel]> = [
      ["All", LogLevel.All],
      ["trace", LogLevel.Trace],
      ["DEBUG", LogLevel.Debug],
      ["Info", LogLevel.Info],
      ["Warning", LogLevel.Warning],
      ["WARN", LogLevel.Warning],
      ["warn", LogLevel.Warning],
      ["Error", LogLevel.Error],
      ["Fatal", LogLevel.Fatal],
      ["None", LogLevel.None],
      ["OFF", LogLevel.None],
      [" info ", LogLevel.Info]
    ]
    for (const [value, level] of cases) expect({ value, level: Either.map(read(value), (l) => l._tag) }).toEqual({ value, level: Either.right(level._tag) })
  })

  it("refuses anything else, naming what it takes", () => {
    const result = read("verbose")
    expect(Either.isLeft(result)).toBe(true)
    const message = String(Either.isLeft(result) ? result.left : "")
    expect(message).toContain('"verbose"')
    expect(message).toContain("Warning (WARN)")
    expect(message).toContain("None (OFF)")
  })
})
