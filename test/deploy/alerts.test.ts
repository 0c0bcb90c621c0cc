import { execFile } from "node:child_process"
import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parse, stringify } from "yaml"
import { documentedMetrics, sampleNamesOf } from "../support/documentedMetrics.js"
import { allOptions, chart, find, type K8sObject, kubeVersion, minimal, useHelm } from "./chartRendering.js"
import { invalid } from "./kubernetesSchemas.js"

// The chart's PrometheusRule (templates/prometheusrule.yaml) as Prometheus reads it: its spec is a
// rules file, which promtool checks and runs the unit tests of test/deploy/alerts/ against.
const { helmRun, render } = useHelm()
const run = promisify(execFile)

/** Debian's promtool (package `prometheus`), as the CI machines and this one have it. */
const promtool = process.env["PORTFOLIO_PROMTOOL"] ?? "/usr/bin/promtool"
const unitTests = fileURLToPath(new URL("./alerts/", import.meta.url))
const enabled = ["--set", "metrics.prometheusRule.enabled=true", "--set", "metrics.prometheusRule.force=true"] as const

interface Rule {
  readonly record?: string
  readonly alert?: string
  readonly expr: string
  readonly for?: string
  readonly labels?: Record<string, string>
  readonly annotations?: Record<string, string>
}
interface RuleGroup {
  readonly name: string
  readonly rules: ReadonlyArray<Rule>
}

const rulesOf = (objects: ReadonlyArray<K8sObject>) => objects.filter((o) => o.kind === "PrometheusRule")
const groupsOf = (rule: K8sObject): ReadonlyArray<RuleGroup> => rule.spec.groups
const alertsOf = (rule: K8sObject) => groupsOf(rule).flatMap((group) => group.rules.filter((r) => r.alert !== undefined))

/** Runs promtool; answers its exit code and its output (both streams), a failure included. */
const promtoolRun = (cwd: string, ...args: ReadonlyArray<string>) =>
  run(promtool, [...args], { cwd, maxBuffer: 16 * 1024 * 1024 }).then(
    ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
    (error: { code?: number | string; stdout?: string; stderr?: string }) => {
      if (typeof error.code !== "number") throw new Error(`${promtool} did not run (${String(error.code)}): install Debian's prometheus package, or set PORTFOLIO_PROMTOOL`)
      return { code: error.code, output: `${error.stdout ?? ""}${error.stderr ?? ""}` }
    }
  )

/** PromQL's functions, aggregations and keywords among the words of an expression: not metric names. */
const keywords = new Set([
  "sum", "max", "rate", "increase", "absent", "by", "on", "and", "or", "unless", "offset"
])

/**
 * The metric names an expression selects: its words once strings, label matchers, range and offset
 * durations and grouping label lists are removed, less what is called and PromQL's keywords.
 */
const metricNamesIn = (expr: string): ReadonlySet<string> => {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|`[^`]*`/g, "\"\"")
    .replace(/\{[^}]*\}/g, "")
    .replace(/\[[^\]]*\]/g, "")
    .replace(/\boffset\s+[0-9]+[a-z]+/g, "")
    .replace(/\b(?:by|without|on|ignoring)\s*\([^)]*\)/g, "")
  const names = new Set<string>()
  for (const word of bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const called = bare.slice(word.index + word[0].length).trimStart().startsWith("(")
    if (!called && !keywords.has(word[0])) names.add(word[0])
  }
  return names
}

/** An alert_rule_test of a promtool unit test file. */
interface AlertCase {
  readonly file: string
  readonly test: string
  readonly alertname: string
  readonly fires: boolean
}

const alertCases = async (): Promise<ReadonlyArray<AlertCase>> => {
  const files = (await readdir(unitTests)).filter((name) => name.endsWith(".test.yaml")).sort()
  const cases: Array<AlertCase> = []
  for (const file of files) {
    const unit = parse(await readFile(join(unitTests, file), "utf8")) as {
      tests: ReadonlyArray<{ name: string; alert_rule_test?: ReadonlyArray<{ alertname: string; exp_alerts?: ReadonlyArray<unknown> }> }>
    }
    for (const test of unit.tests) {
      for (const check of test.alert_rule_test ?? []) cases.push({ file, test: test.name, alertname: check.alertname, fires: (check.exp_alerts ?? []).length > 0 })
    }
  }
  return cases
}

describe("the PrometheusRule", () => {
  it("is off by default, and rendered when enabled where the Prometheus Operator's API is served or when forced", async () => {
    expect(rulesOf(await render())).toEqual([])
    expect(rulesOf(await render("--api-versions", "monitoring.coreos.com/v1"))).toEqual([])
    expect(rulesOf(await render("--set", "metrics.prometheusRule.enabled=true"))).toEqual([])
    expect(rulesOf(await render("--api-versions", "monitoring.coreos.com/v1", "--set", "metrics.prometheusRule.enabled=true"))).toHaveLength(1)
    const forced = rulesOf(await render(...enabled))
    expect(forced.map((o) => o.metadata.name)).toEqual(["rel-architecture-portfolio"])
    expect(invalid(forced)).toEqual([])
  })

  it("takes its labels, objectives and thresholds from the values, and passes the Operator's schema", async () => {
    const rule = find(await render("-f", allOptions), "PrometheusRule", "ap")
    expect(rule.metadata.labels?.["release"]).toBe("kube-prometheus-stack")
    expect(invalid([rule])).toEqual([])
    const exprs = groupsOf(rule).flatMap((group) => group.rules.map((r) => r.expr)).join("\n")
    // all-options.values.yaml: 99.5% available, 95% within 0.5 s, 80% of failing first attempts, 600 s, 1000 messages, 75% of the heap, 95% busy.
    expect(exprs).toContain("> (14.4 * (100 - 99.5) / 100)")
    expect(exprs).toContain("> (14.4 * (100 - 95) / 100)")
    expect(exprs).toContain("le=~`0\\.5(\\.0)?`")
    expect(exprs).not.toContain("le=~`1(\\.0)?`")
    expect(exprs).toContain("> 80 / 100")
    expect(exprs).toContain("portfolio_outbox_oldest_age_seconds{namespace=\"portfolio\", job=~\"gateway|referential|provisioning|webhook-dispatcher|console\"}) > 600")
    expect(exprs).toContain("portfolio_jetstream_consumer_pending{namespace=\"portfolio\", job=~\"gateway|referential|provisioning|webhook-dispatcher|console\"}) > 1000")
    expect(exprs).toContain("portfolio_runtime_heap_max_bytes{namespace=\"portfolio\", job=~\"gateway|referential|provisioning|webhook-dispatcher|console\"})\n> 75 / 100")
    expect(exprs).toContain("[5m]))\n> 95 / 100")
    const annotations = JSON.stringify(alertsOf(rule).map((a) => a.annotations))
    expect(annotations).toContain("the objective of 95% within 0.5 s")
    expect(annotations).toContain("the 99.5% availability objective")
    // A decimal given with --set arrives as a string: taken the same.
    const set = find(await render(...enabled, "--set", "metrics.prometheusRule.slo.latencyThresholdSeconds=0.5", "--set", "metrics.prometheusRule.slo.availabilityPercent=99.5"), "PrometheusRule", "rel-architecture-portfolio")
    const setExprs = groupsOf(set).flatMap((group) => group.rules.map((r) => r.expr)).join("\n")
    expect(setExprs).toContain("le=~`0\\.5(\\.0)?`")
    expect(setExprs).toContain("(100 - 99.5)")
  })

  it("refuses an objective that is no percentage, and a latency threshold that is no boundary of the histogram, naming the value", async () => {
    const refusal = (...values: ReadonlyArray<string>) =>
      helmRun("template", "rel", chart, "--kube-version", kubeVersion, ...minimal, ...enabled, ...values.flatMap((value) => ["--set", value])).then(
        () => "accepted",
        (error: { stderr: string }) => error.stderr
      )
    for (const value of ["100", "0", "abc"]) {
      expect(await refusal(`metrics.prometheusRule.slo.availabilityPercent=${value}`), value).toContain("/metrics/prometheusRule/slo/availabilityPercent")
      expect(await refusal(`metrics.prometheusRule.slo.latencyPercent=${value}`), value).toContain("/metrics/prometheusRule/slo/latencyPercent")
    }
    expect(await refusal("metrics.prometheusRule.slo.latencyThresholdSeconds=0.3")).toContain("/metrics/prometheusRule/slo/latencyThresholdSeconds")
    expect(await refusal("metrics.prometheusRule.slo.latencyThresholdSeconds=2.5")).toBe("accepted")
  })

  it("selects the jobs of the release's ServiceMonitor in its namespace, and only metrics the services export", async () => {
    for (const values of [[], ["--set", "webhookDispatcher.enabled=false", "--set", "console.enabled=false"]]) {
      const objects = await render(...enabled, "--set", "metrics.serviceMonitor.force=true", ...values)
      const rule = find(objects, "PrometheusRule", "rel-architecture-portfolio")
      const monitor = find(objects, "ServiceMonitor", "rel-architecture-portfolio")
      const scraped = objects
        .filter((o) => o.kind === "Service" && Object.entries(monitor.spec.selector.matchLabels).every(([key, value]) => o.metadata.labels?.[key] === value))
        .map((s) => s.metadata.labels![monitor.spec.jobLabel]!)
      const up = alertsOf(rule).find((a) => a.alert === "PortfolioTargetDown")!.expr
      expect(/job=~"([^"]*)"/.exec(up)?.[1]?.split("|").sort()).toEqual(scraped.sort())
      const alerts = alertsOf(rule).map((a) => a.alert)
      expect(alerts.some((name) => name?.startsWith("PortfolioWebhook"))).toBe(values.length === 0)
    }

    const rule = find(await render(...enabled), "PrometheusRule", "rel-architecture-portfolio")
    const exported = new Set(documentedMetrics().flatMap(sampleNamesOf))
    const recorded = new Set(groupsOf(rule).flatMap((group) => group.rules.flatMap((r) => (r.record === undefined ? [] : [r.record]))))
    const read = groupsOf(rule).flatMap((group) => group.rules.flatMap((r) => [...metricNamesIn(r.expr)].map((name) => ({ rule: r.record ?? r.alert, name }))))
    expect(read.length).toBeGreaterThan(20)
    // up is Prometheus's own, for every target it scrapes.
    expect(read.filter(({ name }) => name !== "up" && !exported.has(name) && !recorded.has(name))).toEqual([])
    expect(new Set(read.map(({ name }) => name))).toContain("portfolio_outbox_oldest_age_seconds")
    for (const selector of groupsOf(rule).flatMap((group) => group.rules.flatMap((r) => r.expr.match(/\{[^}]*\}/g) ?? []))) {
      expect(selector).toContain("namespace=\"portfolio\"")
    }
  })
})

describe("the rules under promtool", () => {
  let folder: string
  let rule: K8sObject
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), "ap-alerts-"))
    rule = find(await render(...enabled), "PrometheusRule", "rel-architecture-portfolio")
    await writeFile(join(folder, "rules.yaml"), stringify(rule.spec))
  })
  afterAll(() => rm(folder, { recursive: true, force: true }))

  it("are a rules file promtool accepts, every rule of it", async () => {
    const { code, output } = await promtoolRun(folder, "check", "rules", "rules.yaml")
    expect(output).toContain(`SUCCESS: ${groupsOf(rule).flatMap((group) => group.rules).length} rules found`)
    expect(code).toBe(0)
    // The values' other settings render rules promtool accepts too.
    await writeFile(join(folder, "every.yaml"), stringify(find(await render("-f", allOptions), "PrometheusRule", "ap").spec))
    expect((await promtoolRun(folder, "check", "rules", "every.yaml")).code).toBe(0)
  })

  it("fire, and stay silent, as test/deploy/alerts/*.test.yaml expect", async () => {
    const files = (await readdir(unitTests)).filter((name) => name.endsWith(".test.yaml")).sort()
    expect(files.length).toBeGreaterThanOrEqual(4)
    for (const file of files) await copyFile(join(unitTests, file), join(folder, file))
    const { code, output } = await promtoolRun(folder, "test", "rules", ...files)
    expect(output).not.toContain("FAILED")
    expect(output.match(/SUCCESS/g)).toHaveLength(files.length)
    expect(code).toBe(0)
  }, 180_000)

  it("have, for every alert, a case where it fires and one where it stays silent, and no case of an alert they lack", async () => {
    const cases = await alertCases()
    const alerts = alertsOf(rule).map((a) => a.alert!)
    expect(alerts.length).toBe(13)
    for (const alert of alerts) {
      expect(cases.some((c) => c.alertname === alert && c.fires), `${alert} fires in no case`).toBe(true)
      expect(cases.some((c) => c.alertname === alert && !c.fires), `${alert} is silent in no case`).toBe(true)
    }
    // promtool finds nothing wrong with an alert it does not know expected silent.
    expect(cases.filter((c) => !alerts.includes(c.alertname))).toEqual([])
    for (const alert of alertsOf(rule)) {
      expect(["page", "ticket"], alert.alert).toContain(alert.labels?.["severity"])
      expect(alert.annotations?.["summary"], alert.alert).toContain("{{ $labels.job }}")
      expect(alert.annotations?.["description"], alert.alert).toBeTruthy()
    }
  })

  it("fail a unit test that expects an alert the series do not raise (the negative control)", async () => {
    const wrong = {
      rule_files: ["rules.yaml"],
      evaluation_interval: "1m",
      tests: [{
        name: "an outbox publishing as it goes, expected to page",
        interval: "1m",
        input_series: [{ series: "portfolio_outbox_oldest_age_seconds{namespace=\"portfolio\", job=\"referential\", instance=\"10.0.0.3:8083\"}", values: "0x20" }],
        alert_rule_test: [{
          eval_time: "20m",
          alertname: "PortfolioOutboxStalled",
          exp_alerts: [{ exp_labels: { severity: "page", namespace: "portfolio", job: "referential" } }]
        }]
      }]
    }
    await writeFile(join(folder, "wrong.test.yaml"), stringify(wrong))
    const { code, output } = await promtoolRun(folder, "test", "rules", "wrong.test.yaml")
    expect(code).not.toBe(0)
    expect(output).toContain("FAILED")
    expect(output).toContain("alertname: PortfolioOutboxStalled")
  })
})
