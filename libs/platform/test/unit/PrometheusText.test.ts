import { describe, expect, it } from "@effect/vitest"
import { parsePrometheusText, samplesOf, sumOf } from "../../testing/PrometheusText.js"

const valid = `# HELP requests_total Requests, by "route".\\nSecond line with a back\\\\slash.
# TYPE requests_total counter
requests_total{route="/a/{id}",status="200"} 3
requests_total{route="/b",status="404",} 1 1700000000000
# a comment, and an OpenMetrics line 0.0.4 reads as one
# UNIT requests_total requests

# TYPE latency_seconds histogram
latency_seconds_count{route="/a"} 3
latency_seconds_sum{route="/a"} 0.75
latency_seconds_bucket{route="/a",le="0.1"} 1
latency_seconds_bucket{route="/a",le="1"} 3
latency_seconds_bucket{route="/a",le="+Inf"} 3
# TYPE pool gauge
pool{state="idle",note="say \\"hi\\"\\\\\\n"} -1.5e+1
untyped_thing NaN
`

/** The error of parsing `text`, or "parsed". */
const refusal = (text: string) => {
  try {
    parsePrometheusText(text)
    return "parsed"
  } catch (error) {
    return (error as Error).message
  }
}

describe("the strict reader of the Prometheus text format 0.0.4", () => {
  it("reads families, types, HELP escapes, labels with escapes and a trailing comma, specials and timestamps", () => {
    const families = parsePrometheusText(valid)
    expect([...families.keys()]).toEqual(["requests_total", "latency_seconds", "pool", "untyped_thing"])
    expect(families.get("requests_total")).toMatchObject({ type: "counter", help: "Requests, by \"route\".\nSecond line with a back\\slash." })
    expect(samplesOf(families, "requests_total", { status: "404" })).toEqual([{ name: "requests_total", labels: { route: "/b", status: "404" }, value: 1 }])
    expect(sumOf(families, "requests_total")).toBe(4)
    expect(sumOf(families, "latency_seconds_bucket", { le: "1" })).toBe(3)
    expect(samplesOf(families, "pool")[0]).toEqual({ name: "pool", labels: { state: "idle", note: "say \"hi\"\\\n" }, value: -15 })
    expect(families.get("untyped_thing")!.type).toBe("untyped")
    expect(Number.isNaN(samplesOf(families, "untyped_thing")[0]!.value)).toBe(true)
  })

  it.each([
    ["no final newline", "a 1", /does not end with a newline/],
    ["a malformed metric name", "1abc 1\n", /metric name is malformed/],
    ["a label name with a dash", "a{bad-name=\"x\"} 1\n", /label bad has no =/],
    ["a reserved label name", "a{__name=\"x\"} 1\n", /reserved/],
    ["an unquoted label value", "a{x=y} 1\n", /not quoted/],
    ["an unknown escape", "a{x=\"\\t\"} 1\n", /unknown escape/],
    ["an unclosed label value", "a{x=\"y} 1\n", /not closed/],
    ["a repeated label", "a{x=\"1\",x=\"2\"} 1\n", /appears twice/],
    ["a value that is no float", "a 1,5\n", /not a float/],
    ["a value glued to the labels", "a{x=\"1\"}1\n", /no blank/],
    ["a timestamp that is no integer", "a 1 1.5\n", /timestamp/],
    ["three fields", "a 1 2 3\n", /at most a timestamp/],
    ["an unknown type", "# TYPE a meter\na 1\n", /no valid type/],
    ["two TYPEs", "# TYPE a gauge\n# TYPE a gauge\na 1\n", /second TYPE/],
    ["two HELPs", "# HELP a x\n# HELP a y\na 1\n", /second HELP/],
    ["a TYPE after the samples", "a 1\n# TYPE a gauge\n", /after samples/],
    ["a family in two groups", "a 1\nb 1\na{x=\"1\"} 2\n", /one group/],
    ["a series twice", "a{x=\"1\"} 1\na{x=\"1\"} 2\n", /twice/],
    ["a negative counter", "# TYPE a_total counter\na_total -1\n", /counter is negative/]
  ])("refuses %s", (_, text, reason) => {
    expect(refusal(text)).toMatch(reason)
  })

  const histogram = (lines: string) => `# TYPE h histogram\n${lines}`
  it.each([
    ["no +Inf bucket", "h_bucket{le=\"1\"} 1\nh_count 1\nh_sum 1\n", /no le="\+Inf"/],
    ["+Inf not equal to _count", "h_bucket{le=\"+Inf\"} 2\nh_count 3\nh_sum 1\n", /_count says 3/],
    ["counts that fall", "h_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_count 1\nh_sum 1\n", /not cumulative/],
    ["no _sum", "h_bucket{le=\"+Inf\"} 1\nh_count 1\n", /needs buckets, _count and _sum/],
    ["a bucket without le", "h_bucket 1\nh_count 1\nh_sum 1\n", /numeric le/]
  ])("refuses a histogram with %s", (_, lines, reason) => {
    expect(refusal(histogram(lines))).toMatch(reason)
  })
})
