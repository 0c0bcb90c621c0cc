import { describe, expect, it } from "@effect/vitest"
import { parentSpanOf, traceContextHeadersOf } from "../../src/telemetry/TraceContext.js"

const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
const spanId = "00f067aa0ba902b7"

describe("parentSpanOf", () => {
  it("reads a valid version-00 header, sampled or not", () => {
    expect(parentSpanOf(`00-${traceId}-${spanId}-01`)).toMatchObject({ _tag: "ExternalSpan", traceId, spanId, sampled: true })
    expect(parentSpanOf(`00-${traceId}-${spanId}-00`)).toMatchObject({ traceId, spanId, sampled: false })
  })

  it("reads the sampled flag alone among the flags", () => {
    expect(parentSpanOf(`00-${traceId}-${spanId}-03`)).toMatchObject({ traceId, spanId, sampled: true })
    expect(parentSpanOf(`00-${traceId}-${spanId}-02`)).toMatchObject({ traceId, spanId, sampled: false })
  })

  it("reads a later version by its first four fields", () => {
    expect(parentSpanOf(`01-${traceId}-${spanId}-01-more`)).toMatchObject({ traceId, spanId })
    expect(parentSpanOf(`01-${traceId}-${spanId}-01`)).toMatchObject({ traceId, spanId })
  })

  it("reads a header with white space around it", () => {
    expect(parentSpanOf(`  00-${traceId}-${spanId}-01\t `)).toMatchObject({ traceId, spanId, sampled: true })
  })

  it.each([
    ["absent", undefined],
    ["null", null],
    ["repeated", [`00-${traceId}-${spanId}-01`, `00-${traceId}-${spanId}-01`]],
    ["given once as an array", [`00-${traceId}-${spanId}-01`]],
    ["empty", ""],
    ["garbage", "garbage"],
    ["upper-case hex", `00-${traceId.toUpperCase()}-${spanId}-01`],
    ["upper-case hex in both ids", `00-${traceId.toUpperCase()}-${spanId.toUpperCase()}-03`],
    ["all-zero trace id", `00-${"0".repeat(32)}-${spanId}-01`],
    ["all-zero span id", `00-${traceId}-${"0".repeat(16)}-01`],
    ["version ff", `ff-${traceId}-${spanId}-01`],
    ["version 00 with more fields", `00-${traceId}-${spanId}-01-x`],
    ["without flags", `00-${traceId}-${spanId}`],
    ["a short trace id", `00-${traceId.slice(2)}-${spanId}-01`],
    ["a trace id one digit short", `00-${traceId.slice(1)}-${spanId}-01`],
    ["a span id that is not hex", `00-${traceId}-${spanId.slice(1)}z-01`],
    ["bad flags", `00-${traceId}-${spanId}-zz`],
    ["wrong separators", `00_${traceId}_${spanId}_01`],
    ["a later version glued to more text", `01-${traceId}-${spanId}-01x`]
  ])("ignores a header that is %s", (_, header) => {
    expect(parentSpanOf(header)).toBeUndefined()
  })
})

describe("traceContextHeadersOf", () => {
  it("writes the span as the next hop's parent, keeping the sampled flag", () => {
    expect(traceContextHeadersOf({ traceId, spanId, sampled: true })).toEqual({ traceparent: `00-${traceId}-${spanId}-01` })
    expect(traceContextHeadersOf({ traceId, spanId, sampled: false })).toEqual({ traceparent: `00-${traceId}-${spanId}-00` })
    expect(parentSpanOf(traceContextHeadersOf({ traceId, spanId, sampled: true }).traceparent)).toMatchObject({ traceId, spanId, sampled: true })
  })

  it("writes none for a span without valid W3C ids", () => {
    expect(traceContextHeadersOf({ traceId: "native", spanId: "native", sampled: false })).toEqual({})
  })
})
