import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

export type DocumentedType = "histogram" | "counter" | "gauge"

export interface DocumentedMetric {
  /** The instrument's OpenTelemetry name (`http.server.request.duration`). */
  readonly name: string
  /** Its family in a Prometheus exposition (`http_server_request_duration_seconds`). */
  readonly family: string
  readonly type: DocumentedType
}

const page = fileURLToPath(new URL("../../docs/observability.md", import.meta.url))

/** The metrics docs/observability.md documents, read from its table: what the dashboard and the services must agree with. */
export const documentedMetrics = (): ReadonlyArray<DocumentedMetric> => {
  const text = readFileSync(page, "utf8")
  const section = text.slice(text.indexOf("\n## Metrics\n"), text.indexOf("\n## Request logs\n"))
  return section
    .split("\n")
    .filter((line) => line.startsWith("| `"))
    .map((line) => {
      const [, name, family, type] = line.split("|").map((cell) => cell.trim())
      const kind = /^(histogram|counter|gauge)\b/.exec(type ?? "")?.[1] as DocumentedType | undefined
      if (name === undefined || family === undefined || kind === undefined) throw new Error(`docs/observability.md: unreadable metrics row: ${line}`)
      return { name: name.replaceAll("`", ""), family: family.replaceAll("`", ""), type: kind }
    })
}

/** The names a documented family's samples have in an exposition: a histogram's three, else its own. */
export const sampleNamesOf = (metric: DocumentedMetric): ReadonlyArray<string> =>
  metric.type === "histogram" ? [`${metric.family}_bucket`, `${metric.family}_sum`, `${metric.family}_count`] : [metric.family]
