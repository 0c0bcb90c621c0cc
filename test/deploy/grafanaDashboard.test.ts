import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { documentedMetrics, sampleNamesOf } from "../support/documentedMetrics.js"

interface Target {
  readonly refId: string
  readonly expr: string
  readonly datasource: { readonly uid: string }
}

interface Panel {
  readonly id: number
  readonly type: string
  readonly title: string
  readonly gridPos: { readonly x: number; readonly y: number; readonly w: number; readonly h: number }
  readonly datasource?: { readonly uid: string }
  readonly targets?: ReadonlyArray<Target>
}

const dashboard = JSON.parse(readFileSync(fileURLToPath(new URL("../../deploy/grafana/portfolio.json", import.meta.url)), "utf8"))
const panels: ReadonlyArray<Panel> = dashboard.panels
const graphs = panels.filter((panel) => panel.type !== "row")
const expressions = graphs.flatMap((panel) => (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: target.expr })))

/** PromQL's functions, aggregations and keywords among the words of an expression: not metric names. */
const keywords = new Set(["sum", "avg", "min", "max", "count", "rate", "irate", "increase", "histogram_quantile", "by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "bool", "offset"])

/**
 * The metric names an expression selects: its words once string literals, label matchers, range
 * selectors and grouping label lists are removed, less what is called (a function, an
 * aggregation) and PromQL's keywords.
 */
const metricNamesIn = (expr: string): ReadonlySet<string> => {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, "\"\"")
    .replace(/\{[^}]*\}/g, "")
    .replace(/\[[^\]]*\]/g, "")
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, "")
  const names = new Set<string>()
  for (const word of bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const called = bare.slice(word.index + word[0].length).trimStart().startsWith("(")
    if (!called && !keywords.has(word[0])) names.add(word[0])
  }
  return names
}

/** The documented type of each sample name. */
const typeOf = new Map(documentedMetrics().flatMap((metric) => sampleNamesOf(metric).map((name) => [name, metric.type] as const)))

describe("the Grafana dashboard (deploy/grafana/portfolio.json)", () => {
  it("reads every metric name from the documented set, under its Prometheus name", () => {
    expect(expressions.length).toBeGreaterThan(0)
    for (const { expr, panel } of expressions) {
      const names = metricNamesIn(expr)
      expect(names.size, `${panel}: ${expr}`).toBeGreaterThan(0)
      for (const name of names) expect(typeOf.has(name), `${panel}: ${name} is not documented in docs/observability.md`).toBe(true)
    }
  })

  it("shows every documented metric", () => {
    const used = new Set(expressions.flatMap(({ expr }) => [...metricNamesIn(expr)]))
    for (const metric of documentedMetrics()) {
      expect(sampleNamesOf(metric).some((name) => used.has(name)), `${metric.name} is on no panel`).toBe(true)
    }
  })

  it("reads the same words as PromQL would: the name reader is not fooled by labels, ranges or groupings", () => {
    expect([...metricNamesIn("histogram_quantile(0.95, sum by (job, le) (rate(a_bucket{job=~\"$job\", b=\"x{y}\"}[$__rate_interval])))")]).toEqual(["a_bucket"])
    expect([...metricNamesIn("sum by (kind) (rate(c_total{decision=\"refused\"}[5m])) / sum without (le) (rate(c_total[5m])) > bool 0")]).toEqual(["c_total"])
  })

  it("queries the chosen Prometheus everywhere, with well-formed, balanced expressions on a service filter", () => {
    expect(dashboard.templating.list.map((variable: { name: string }) => variable.name)).toEqual(["datasource", "job"])
    for (const panel of graphs) {
      expect(panel.datasource?.uid, panel.title).toBe("${datasource}")
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0)
      for (const target of panel.targets ?? []) {
        expect(target.datasource.uid).toBe("${datasource}")
        expect(target.expr).toContain("job=~\"$job\"")
        let depth = 0
        for (const c of target.expr) {
          depth += c === "(" ? 1 : c === ")" ? -1 : 0
          expect(depth, target.expr).toBeGreaterThanOrEqual(0)
        }
        expect(depth, target.expr).toBe(0)
        // A counter or a histogram is read as a rate: a raw cumulative count on a graph means nothing.
        const cumulative = [...metricNamesIn(target.expr)].some((name) => typeOf.get(name) !== "gauge")
        if (cumulative) expect(target.expr, panel.title).toMatch(/\brate\(/)
      }
      const refIds = (panel.targets ?? []).map((target) => target.refId)
      expect(new Set(refIds).size, panel.title).toBe(refIds.length)
    }
  })

  it("lays the panels out without overlap, within Grafana's 24 columns, each id once", () => {
    expect(new Set(panels.map((panel) => panel.id)).size).toBe(panels.length)
    for (const panel of panels) expect(panel.gridPos.x + panel.gridPos.w, panel.title).toBeLessThanOrEqual(24)
    const overlap = (a: Panel["gridPos"], b: Panel["gridPos"]) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h
    panels.forEach((a, i) => panels.slice(i + 1).forEach((b) => expect(overlap(a.gridPos, b.gridPos), `${a.title} / ${b.title}`).toBe(false)))
  })
})
