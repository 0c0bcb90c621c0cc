import http from "node:http"
import net from "node:net"
import { freePort } from "@portfolio/platform/testing"
import { type ServiceProcess, spawnService } from "../../deploy/local/serviceProcess.js"
import { fromSources, repoRoot } from "./cli.js"

/** A request as it reached a service, with the assertion it carried: what an eavesdropper would hold. */
export interface Captured {
  readonly service: string
  readonly method: string
  /** The request target exactly as received. */
  readonly target: string
  readonly assertion: string
  readonly contentType: string | undefined
  readonly body: Buffer
  /** The service's answer to the genuine request. */
  status: number
}

export interface CapturingProxy {
  readonly url: string
  readonly captured: Array<Captured>
  readonly close: () => Promise<void>
}

/**
 * A pass-through in front of one service port that keeps a copy of every request, its
 * `x-portfolio-assertion` included, byte for byte: the target unparsed, the body unchanged.
 */
export const startCapturingProxy = async (service: string, upstreamUrl: string): Promise<CapturingProxy> => {
  const upstream = new URL(upstreamUrl)
  const captured: Array<Captured> = []
  const server = http.createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const body = Buffer.concat(chunks)
      const entry: Captured = {
        service,
        method: request.method ?? "GET",
        target: request.url ?? "",
        assertion: String(request.headers["x-portfolio-assertion"] ?? ""),
        contentType: request.headers["content-type"],
        body,
        status: 0
      }
      captured.push(entry)
      const { host: _host, connection: _connection, ...headers } = request.headers
      // A connection of its own for each request: a kept-alive one that the service closes as idle
      // just as it is reused would fail a genuine call for no fault of the service.
      const forwarded = http.request(
        { host: upstream.hostname, port: upstream.port, method: entry.method, path: entry.target, headers: { ...headers, host: upstream.host }, agent: false },
        (answer) => {
          entry.status = answer.statusCode ?? 0
          response.writeHead(entry.status, answer.headers)
          answer.pipe(response)
        }
      )
      forwarded.on("error", () => response.writeHead(502).end())
      forwarded.end(body)
    })
  })
  // Idle connections are kept longer than any client keeps them (fetch: 4 s), so that the proxy never
  // closes one as the client reuses it: the test process's event loop is blocked at times (an OpenID
  // Provider's keys generated), and both timers then fire late and together, in either order.
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  if (typeof address !== "object" || address === null) throw new Error("the capturing proxy has no port")
  return {
    url: `http://127.0.0.1:${address.port}`,
    captured,
    close: () => new Promise((resolve) => server.close(() => resolve()))
  }
}

export interface Reply {
  readonly status: number
  readonly body: any
}

/** Sends a request with its target as given: HTTP clients resolve `..` and `%2e%2e` before sending. */
export const sendRaw = (baseUrl: string, request: { readonly method: string; readonly target: string; readonly headers: Record<string, string>; readonly body: Buffer }) =>
  new Promise<Reply>((resolve, reject) => {
    const { hostname, port } = new URL(baseUrl)
    const headers = { ...request.headers, ...(request.body.length > 0 ? { "content-length": String(request.body.length) } : {}) }
    const outgoing = http.request({ host: hostname, port, method: request.method, path: request.target, headers }, (answer) => {
      const chunks: Array<Buffer> = []
      answer.on("data", (chunk: Buffer) => chunks.push(chunk))
      answer.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8")
        let body: unknown = text
        try {
          body = text === "" ? undefined : JSON.parse(text)
        } catch {
          // Not JSON: kept as text for the failure message.
        }
        resolve({ status: answer.statusCode ?? 0, body })
      })
    })
    outgoing.on("error", reject)
    outgoing.end(request.body)
  })

export interface Replay {
  readonly trick: string
  readonly method: string
  readonly target: string
  readonly body: Buffer
  /** Whether the path is the captured one: then nothing but the assertion can refuse it (401). */
  readonly samePath: boolean
}

const otherMethod: Record<string, string> = { GET: "DELETE", DELETE: "GET", POST: "PUT", PUT: "POST" }

/** Another body meaning something else: the first string field changed, or a field added. */
const otherBody = (body: Buffer): Buffer => {
  if (body.length === 0) return Buffer.from("{}")
  const parsed = JSON.parse(body.toString("utf8")) as Record<string, unknown>
  const key = Object.keys(parsed).find((name) => typeof parsed[name] === "string")
  return Buffer.from(JSON.stringify(key === undefined ? { ...parsed, injected: true } : { ...parsed, [key]: `${String(parsed[key])}x` }))
}

/**
 * The captured request replayed with every trick of the finding: the same twice, a `;` that the
 * router cuts at, dot segments plain and encoded that a normalising verifier would resolve back
 * to the signed path, an encoded slash, another query, another body, another method. `decoy` is
 * the resource the attacker wants instead of the signed one (a real one where it matters).
 */
export const replaysOf = (captured: Captured, decoy = "x"): ReadonlyArray<Replay> => {
  const { method, body } = captured
  const split = captured.target.indexOf("?")
  const path = split === -1 ? captured.target : captured.target.slice(0, split)
  const query = split === -1 ? "" : captured.target.slice(split)
  const cut = path.lastIndexOf("/")
  const [dir, last] = [path.slice(0, cut), path.slice(cut + 1)]
  const replay = (trick: string, target: string, changes: Partial<Replay> = {}): Replay => ({ trick, method, target, body, samePath: false, ...changes })
  return [
    replay("the same request twice", captured.target, { samePath: true }),
    replay("another query", `${path}${query === "" ? "?" : `${query}&`}limit=1`, { samePath: true }),
    ...(query === "" ? [] : [replay("no query", path, { samePath: true })]),
    replay("another body", captured.target, { body: otherBody(body), samePath: true }),
    replay("the same body and one more byte", captured.target, { body: Buffer.concat([body, Buffer.from(" ")]), samePath: true }),
    replay("another method", captured.target, { method: otherMethod[method] ?? "GET" }),
    replay("`;` cut by the router, `..` resolved by a verifier", `${dir}/${decoy};/../${last}${query}`),
    replay("a `;` path parameter", `${path};${query}`),
    replay("`..`", `${dir}/${decoy}/../${last}${query}`),
    replay("`%2e%2e`", `${dir}/${decoy}/%2e%2e/${last}${query}`),
    replay("`%2f`", `${dir}%2f${last}${query}`)
  ]
}

/** Replays `captured`'s assertion as `replay` says, straight to the service's own port. */
export const sendReplay = (serviceUrl: string, captured: Captured, replay: Replay) =>
  sendRaw(serviceUrl, {
    method: replay.method,
    target: replay.target,
    headers: { "x-portfolio-assertion": captured.assertion, ...(captured.contentType === undefined ? {} : { "content-type": captured.contentType }) },
    body: replay.body
  })

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, "127.0.0.1", () => {
      socket.destroy()
      resolve(true)
    })
    socket.on("error", () => resolve(false))
  })


/**
 * Another gateway process of the same system (its database, NATS and secret), forwarding to the
 * given upstream URLs: the launcher sets the first gateway's upstreams itself, and this one's go
 * through the capturing proxies.
 */
export const startSecondGateway = async (env: Record<string, string>, upstreams: { readonly referential: string; readonly provisioning: string }) => {
  const [port, adminPort] = [await freePort(), await freePort()]
  const lines: Array<string> = []
  const gateway: ServiceProcess = spawnService({
    name: "gateway",
    cwd: repoRoot,
    compiled: !fromSources,
    env: {
      PATH: process.env["PATH"] ?? "/usr/bin:/bin",
      ...(process.env["HOME"] === undefined ? {} : { HOME: process.env["HOME"] }),
      ...env,
      HOST: "127.0.0.1",
      SERVICE_NAME: "gateway",
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
      REFERENTIAL_URL: upstreams.referential,
      PROVISIONING_URL: upstreams.provisioning
    },
    onLine: (line) => void lines.push(line)
  })
  const url = `http://127.0.0.1:${port}`
  try {
    // The public port has no probe: ready on the admin port, then listening on the public one.
    await gateway.ready([`http://127.0.0.1:${adminPort}`], 60_000)
    while (!(await accepts(port))) await new Promise((resolve) => setTimeout(resolve, 100))
  } catch (error) {
    await gateway.stop(10_000)
    throw new Error(`the second gateway did not start: ${String(error)}\n${lines.slice(-40).join("\n")}`)
  }
  return { url, baseUrl: `${url}/api/v1`, logs: (): ReadonlyArray<string> => lines, stop: () => gateway.stop(10_000) }
}
