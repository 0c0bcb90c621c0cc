import { describe, expect, it } from "@effect/vitest"
import { parseTraceParent, traceParentOf } from "../../src/domain/TraceParent.js"

const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
const spanId = "00f067aa0ba902b7"

describe("parseTraceParent", () => {
  it("reads a valid version-00 header, sampled or not", () => {
    expect(parseTraceParent(`00-${traceId}-${spanId}-01`)).toMatchObject({ _tag: "ExternalSpan", traceId, spanId, sampled: true })
    expect(parseTraceParent(`00-${traceId}-${spanId}-00`)).toMatchObject({ traceId, spanId, sampled: false })
  })

  it("reads a later version by its first four fields", () => {
    expect(parseTraceParent(`01-${traceId}-${spanId}-01-more`)).toMatchObject({ traceId, spanId })
    expect(parseTraceParent(`01-${traceId}-${spanId}-01`)).toMatchObject({ traceId, spanId })
  })

  it.each([
    ["absent", undefined],
    ["repeated", [`00-${traceId}-${spanId}-01`, `00-${traceId}-${spanId}-01`]],
    ["empty", ""],
    ["upper-case hex", `00-${traceId.toUpperCase()}-${spanId}-01`],
    ["all-zero trace id", `00-${"0".repeat(32)}-${spanId}-01`],
    ["all-zero span id", `00-${traceId}-${"0".repeat(16)}-01`],
    ["version ff", `ff-${traceId}-${spanId}-01`],
    ["version 00 with more fields", `00-${traceId}-${spanId}-01-x`],
    ["a short trace id", `00-${traceId.slice(2)}-${spanId}-01`],
    ["bad flags", `00-${traceId}-${spanId}-zz`],
    ["wrong separators", `00_${traceId}_${spanId}_01`],
    ["a later version glued to more text", `01-${traceId}-${spanId}-01x`]
  ])("ignores a header that is %s", (_, header) => {
    expect(parseTraceParent(header)).toBeUndefined()
  })

  it("writes the span as the next hop's parent, keeping the sampled flag", () => {
    expect(traceParentOf({ traceId, spanId, sampled: true })).toBe(`00-${traceId}-${spanId}-01`)
    expect(traceParentOf({ traceId, spanId, sampled: false })).toBe(`00-${traceId}-${spanId}-00`)
    expect(parseTraceParent(traceParentOf({ traceId, spanId, sampled: true }))).toMatchObject({ traceId, spanId })
  })
})
