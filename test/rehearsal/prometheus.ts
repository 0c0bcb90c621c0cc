import type { K8sObject } from "./podSpec.js"

/**
 * The chart's ServiceMonitor as the Prometheus Operator turns it into scrape configuration, the
 * Kubernetes service discovery replaced by the endpoints the rehearsal knows: one target per pod
 * behind each selected Service's named port, labelled as the operator labels them (job from the
 * jobLabel, namespace, service, pod, container, endpoint).
 */
export interface ScrapeTarget {
  readonly address: string
  readonly labels: Readonly<Record<string, string>>
}

export interface EndpointPod {
  readonly name: string
  readonly ip: string
  readonly labels: Readonly<Record<string, string>>
  readonly containers: ReadonlyArray<{ readonly name: string; readonly ports: ReadonlyArray<{ readonly name?: string; readonly containerPort: number }> }>
}

const selects = (selector: Record<string, string>, labels: Readonly<Record<string, string>>) =>
  Object.entries(selector).every(([key, value]) => labels[key] === value)

const camelToSnake = (key: string) => key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)

const relabel = (config: Record<string, unknown>) => Object.fromEntries(Object.entries(config).map(([key, value]) => [camelToSnake(key), value]))

const EndpointFields = new Set(["port", "path", "interval", "scrapeTimeout", "relabelings", "metricRelabelings"])

export const scrapeConfigs = (monitor: K8sObject, services: ReadonlyArray<K8sObject>, pods: ReadonlyArray<EndpointPod>, namespace: string) => {
  const spec = monitor["spec"]
  for (const key of Object.keys(spec)) {
    if (!["jobLabel", "namespaceSelector", "selector", "endpoints"].includes(key)) throw new Error(`the rehearsal does not know ServiceMonitor spec.${key}`)
  }
  if (spec.namespaceSelector?.matchNames !== undefined && !spec.namespaceSelector.matchNames.includes(namespace)) {
    throw new Error(`the ServiceMonitor does not look in the release's namespace ${namespace}`)
  }
  const selected = services.filter((service) => selects(spec.selector.matchLabels ?? {}, service.metadata.labels ?? {}))
  return (spec.endpoints as Array<Record<string, any>>).map((endpoint, index) => {
    for (const key of Object.keys(endpoint)) if (!EndpointFields.has(key)) throw new Error(`the rehearsal does not know ServiceMonitor endpoint field ${key}`)
    const targets: Array<ScrapeTarget> = selected.flatMap((service) => {
      const servicePort = (service["spec"].ports as Array<{ name: string; targetPort: string | number }>).find((port) => port.name === endpoint["port"])
      if (servicePort === undefined) return []
      return pods
        .filter((pod) => selects(service["spec"].selector, pod.labels))
        .flatMap((pod) =>
          pod.containers.flatMap((container) =>
            container.ports
              .filter((port) => port.name === servicePort.targetPort || port.containerPort === servicePort.targetPort)
              .map((port) => ({
                address: `${pod.ip}:${port.containerPort}`,
                labels: {
                  job: service.metadata.labels?.[spec.jobLabel] ?? service.metadata.name,
                  namespace,
                  service: service.metadata.name,
                  pod: pod.name,
                  container: container.name,
                  endpoint: String(endpoint["port"])
                }
              }))
          )
        )
    })
    return {
      job_name: `serviceMonitor/${namespace}/${monitor.metadata.name}/${index}`,
      honor_labels: false,
      scrape_interval: endpoint["interval"],
      scrape_timeout: endpoint["scrapeTimeout"],
      metrics_path: endpoint["path"] ?? "/metrics",
      static_configs: targets.map((target) => ({ targets: [target.address], labels: target.labels })),
      ...(endpoint["relabelings"] !== undefined ? { relabel_configs: (endpoint["relabelings"] as Array<Record<string, unknown>>).map(relabel) } : {}),
      ...(endpoint["metricRelabelings"] !== undefined ? { metric_relabel_configs: (endpoint["metricRelabelings"] as Array<Record<string, unknown>>).map(relabel) } : {})
    }
  })
}

export interface PanelQuery {
  readonly panel: string
  readonly expr: string
}

/** Every query of a Grafana dashboard's panels (rows' nested panels included), as written. */
export const panelQueries = (dashboard: { panels: Array<any> }): ReadonlyArray<PanelQuery> =>
  dashboard.panels.flatMap((panel) => [
    ...(panel.targets ?? []).filter((t: any) => typeof t.expr === "string" && t.hide !== true).map((t: any) => ({ panel: panel.title as string, expr: t.expr as string })),
    ...panelQueries({ panels: panel.panels ?? [] })
  ])

/**
 * A query as Grafana sends it: template variables replaced by their values (a multi-value variable
 * as a regex alternation), $__rate_interval by four scrape intervals, as Grafana computes it for a
 * short range.
 */
export const substitute = (expr: string, variables: Readonly<Record<string, ReadonlyArray<string>>>, scrapeIntervalSeconds: number) =>
  expr
    .replace(/\$__rate_interval|\$\{__rate_interval\}/g, `${4 * scrapeIntervalSeconds}s`)
    .replace(/\$__interval|\$\{__interval\}/g, `${scrapeIntervalSeconds}s`)
    .replace(/\$\{(\w+)(?::\w+)?\}|\$(\w+)/g, (whole, braced: string | undefined, bare: string | undefined) => {
      const values = variables[braced ?? bare ?? ""]
      if (values === undefined) return whole
      return values.length === 1 ? values[0]! : `(${values.join("|")})`
    })
