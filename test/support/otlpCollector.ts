import http from "node:http"
import type { AddressInfo } from "node:net"

/** One span as OTLP/HTTP JSON carries it, with the resource's service name beside it. */
export interface CollectedSpan {
  readonly service: string
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string
  readonly name: string
  readonly kind: number
  readonly attributes: Record<string, unknown>
  readonly links: ReadonlyArray<{ readonly traceId: string; readonly spanId: string }>
}

export const ServerKind = 2
export const ClientKind = 3
export const ProducerKind = 4
export const ConsumerKind = 5

/** One metric of an OTLP/HTTP JSON export, with the resource's service name beside it. */
export interface CollectedMetric {
  readonly service: string
  readonly name: string
}

const serviceOf = (resource: { attributes: Array<any> }): string =>
  resource.attributes.find((a: any) => a.key === "service.name")?.value.stringValue

/** A fake OTLP/HTTP collector: every service exports here, as JSON (the http exporters' default). */
export class OtlpCollector {
  readonly spans: Array<CollectedSpan> = []
  readonly metrics: Array<CollectedMetric> = []
  readonly raw: Array<string> = []
  readonly #server = http.createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8")
      this.raw.push(body)
      const json = /json/.test(request.headers["content-type"] ?? "")
      if (request.url === "/v1/traces" && json) this.#collect(JSON.parse(body))
      if (request.url === "/v1/metrics" && json) this.#collectMetrics(JSON.parse(body))
      response.writeHead(200, { "content-type": "application/json" })
      response.end("{}")
    })
  })

  #collectMetrics(payload: { resourceMetrics: Array<any> }) {
    for (const resourceMetrics of payload.resourceMetrics) {
      const service = serviceOf(resourceMetrics.resource)
      for (const scope of resourceMetrics.scopeMetrics) for (const metric of scope.metrics) this.metrics.push({ service, name: metric.name })
    }
  }

  #collect(payload: { resourceSpans: Array<any> }) {
    for (const resourceSpans of payload.resourceSpans) {
      const service = serviceOf(resourceSpans.resource)
      for (const scope of resourceSpans.scopeSpans) {
        for (const span of scope.spans) {
          this.spans.push({
            service,
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId ?? "",
            name: span.name,
            kind: span.kind,
            attributes: Object.fromEntries(span.attributes.map((a: any) => [a.key, Object.values(a.value)[0]])),
            links: (span.links ?? []).map((link: any) => ({ traceId: link.traceId, spanId: link.spanId }))
          })
        }
      }
    }
  }

  /** Listens on loopback unless told an address; the URL is what OTEL_EXPORTER_OTLP_ENDPOINT takes. */
  async start(host = "127.0.0.1", port = 0) {
    await new Promise<void>((resolve) => this.#server.listen(port, host, resolve))
    return `http://${host}:${(this.#server.address() as AddressInfo).port}`
  }

  /**
   * Ends the exporters' keep-alive connections too: close() alone waits for them, and one from a
   * pod whose network namespace went away never ends (the rehearsal hung on it in its cleanup).
   */
  stop() {
    this.#server.closeAllConnections()
    return new Promise<void>((resolve) => this.#server.close(() => resolve()))
  }

  /** Waits for the spans of a trace until `done` holds of them (the services export every 100 ms). */
  async trace(traceId: string, done: (trace: ReadonlyArray<CollectedSpan>) => boolean) {
    for (let i = 0; i < 100; i++) {
      const trace = this.spans.filter((span) => span.traceId === traceId)
      if (done(trace)) return trace
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    throw new Error(`trace ${traceId} incomplete: ${JSON.stringify(this.spans.filter((span) => span.traceId === traceId), null, 1)}`)
  }
}
