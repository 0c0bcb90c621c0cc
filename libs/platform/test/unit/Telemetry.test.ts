import { describe, expect, it } from "@effect/vitest"
import { Effect, Logger } from "effect"
import { withTraceIds } from "../../src/telemetry/Telemetry.js"
import { jsonLogger } from "../../src/telemetry/LogFormat.js"

/** Runs `program` with the JSON logger wrapped by `withTraceIds`, and returns the lines it wrote. */
const linesOf = <A, E>(program: Effect.Effect<A, E>) => {
  const lines: Array<Record<string, unknown>> = []
  const capture = withTraceIds(Logger.map(jsonLogger, (line) => void lines.push(JSON.parse(line) as Record<string, unknown>)))
  return Effect.as(Effect.provide(program, Logger.layer([capture])), lines)
}

describe("withTraceIds", () => {
  it.effect("annotates a line written inside a span with that span's trace and span ids", () =>
    Effect.gen(function*() {
      let span = { traceId: "", spanId: "" }
      const program = Effect.gen(function*() {
        span = yield* Effect.currentSpan
        yield* Effect.logInfo("inside")
      }).pipe(Effect.withSpan("unit"))
      const lines = yield* linesOf(Effect.andThen(program, Effect.logInfo("after")))
      expect(lines).toHaveLength(2)
      expect(lines[0]!.annotations).toEqual({ traceId: span.traceId, spanId: span.spanId })
      expect(span.traceId).toMatch(/^[0-9a-f]{32}$/)
      expect(lines[1]!.annotations).toEqual({})
    }))

  it.effect("names the innermost span and keeps the line's own annotations", () =>
    Effect.gen(function*() {
      let outerId = ""
      let innerId = ""
      let traceId = ""
      const program = Effect.gen(function*() {
        const outer = yield* Effect.currentSpan
        outerId = outer.spanId
        traceId = outer.traceId
        yield* Effect.gen(function*() {
          innerId = (yield* Effect.currentSpan).spanId
          yield* Effect.logInfo("inner").pipe(Effect.annotateLogs("tenant", "t1"))
        }).pipe(Effect.withSpan("inner"))
      }).pipe(Effect.withSpan("outer"))
      const lines = yield* linesOf(program)
      expect(lines[0]!.annotations).toEqual({ tenant: "t1", traceId, spanId: innerId })
      expect(innerId).not.toBe(outerId)
    }))
})
