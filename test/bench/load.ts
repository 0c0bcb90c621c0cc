import http from "node:http"

export interface LoadOptions {
  readonly url: string
  readonly headers?: Record<string, string>
  /** Number of closed loops, each with one request in flight at a time. */
  readonly concurrency: number
  readonly warmupMs: number
  readonly durationMs: number
}

export interface LoadResult {
  readonly requests: number
  readonly errors: number
  readonly requestsPerSecond: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly bytesPerResponse: number
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!

/**
 * A bounded closed-loop load generator: `concurrency` loops each send a request, wait for the
 * whole response, and send the next, over keep-alive connections, for warm-up plus duration.
 * Only requests started after the warm-up are measured. Loopback only.
 */
export const runLoad = async (options: LoadOptions): Promise<LoadResult> => {
  const target = new URL(options.url)
  if (target.hostname !== "127.0.0.1") throw new Error(`the load generator only sends to 127.0.0.1, not ${target.hostname}`)
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency })
  const latencies: Array<number> = []
  let errors = 0
  let bytes = 0
  const startedAt = performance.now()
  const measureFrom = startedAt + options.warmupMs
  const stopAt = measureFrom + options.durationMs

  const once = () =>
    new Promise<{ ok: boolean; size: number }>((resolve) => {
      const request = http.request(target, { agent, headers: options.headers ?? {} }, (response) => {
        let size = 0
        response.on("data", (chunk: Buffer) => (size += chunk.length))
        response.on("end", () => resolve({ ok: response.statusCode === 200, size }))
        response.on("error", () => resolve({ ok: false, size }))
      })
      request.on("error", () => resolve({ ok: false, size: 0 }))
      request.end()
    })

  const loop = async () => {
    while (performance.now() < stopAt) {
      const sentAt = performance.now()
      const { ok, size } = await once()
      if (sentAt < measureFrom) continue
      if (!ok) errors++
      else {
        latencies.push(performance.now() - sentAt)
        bytes = size
      }
    }
  }
  await Promise.all(Array.from({ length: options.concurrency }, loop))
  agent.destroy()
  const measuredSeconds = (performance.now() - measureFrom) / 1000
  latencies.sort((a, b) => a - b)
  return {
    requests: latencies.length,
    errors,
    requestsPerSecond: latencies.length / measuredSeconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    bytesPerResponse: bytes
  }
}
