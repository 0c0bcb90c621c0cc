import type { ErrorCode } from "@portfolio/domain"
import { Config, Duration, Effect } from "effect"
import http from "node:http"
import type net from "node:net"
import { problemAnswer, writeProblem } from "./ProblemResponse.js"
import { durationSetting, integerAtLeast, invalidSetting } from "../config/Settings.js"

/**
 * What every listening server of the platform allows a client (docs/security.md, "Timeouts and
 * limits"). Read once at start; the same for the public, service and admin ports.
 */
export interface HttpLimits {
  /** How long an idle keep-alive connection is kept: longer than a reverse proxy in front keeps its own (ingress-nginx: 60 s). */
  readonly keepAliveTimeoutMs: number
  /** Time to receive a request's line and headers, from its first byte (or from the connection's opening). */
  readonly headersTimeoutMs: number
  /**
   * Time to receive a whole request, headers and body. Below the gateway's UPSTREAM_TIMEOUT (25 s),
   * so that a slow upload is the client's 408 rather than a 503 blaming the upstream that waits for it.
   */
  readonly requestTimeoutMs: number
  /** Connections one client address may hold open at once; 0: no bound. */
  readonly maxConnectionsPerClient: number
}

export const DefaultHttpLimits: HttpLimits = {
  keepAliveTimeoutMs: 75_000,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 20_000,
  maxConnectionsPerClient: 256
}

/** Node's own limit, kept, but written here so that the 431 documented for it cannot drift from it. */
export const MaxHeaderBytes = 16_384

/** How long in-flight requests may run once the server is asked to stop, before their sockets are cut. */
const ShutdownGraceMs = 10_000

/** How long a refused connection is kept reading after its answer, so that closing it does not reset the answer away. */
const LingerMs = 1_000

const positiveDuration = (name: string, fallbackMs: number) =>
  durationSetting(name).pipe(
    Config.mapEffect((d) =>
      Duration.toMillis(d) >= 1 ? Effect.succeed(d) : Effect.fail(invalidSetting(name, "must be a positive duration such as '30 seconds'"))
    ),
    Config.map((d) => Math.ceil(Duration.toMillis(d))),
    Config.withDefault(fallbackMs)
  )

/** The limits from HTTP_KEEP_ALIVE_TIMEOUT, HTTP_HEADERS_TIMEOUT, HTTP_REQUEST_TIMEOUT and MAX_CONNECTIONS_PER_CLIENT. */
export const httpLimitsConfig: Config.Config<HttpLimits> = Config.all({
  keepAliveTimeoutMs: positiveDuration("HTTP_KEEP_ALIVE_TIMEOUT", DefaultHttpLimits.keepAliveTimeoutMs),
  headersTimeoutMs: positiveDuration("HTTP_HEADERS_TIMEOUT", DefaultHttpLimits.headersTimeoutMs),
  requestTimeoutMs: positiveDuration("HTTP_REQUEST_TIMEOUT", DefaultHttpLimits.requestTimeoutMs),
  maxConnectionsPerClient: integerAtLeast("MAX_CONNECTIONS_PER_CLIENT", 0, DefaultHttpLimits.maxConnectionsPerClient, "must be 0 (no bound) or more")
}).pipe(
  // Node refuses to start otherwise; said here, the refusal names the variable.
  Config.mapEffect((limits) =>
    limits.headersTimeoutMs > limits.requestTimeoutMs
      ? Effect.fail(invalidSetting("HTTP_HEADERS_TIMEOUT", "must not exceed HTTP_REQUEST_TIMEOUT"))
      : Effect.succeed(limits)
  )
)

/**
 * The options of `http.createServer`. Node checks the headers and request timeouts only every
 * `connectionsCheckingInterval` (30 s by default, which let a slowloris hold a connection 74 s):
 * a quarter of the headers timeout, at most a second, keeps the bound close to what is configured.
 * The headers timeout does not have to exceed the keep-alive timeout (an old rule of Node before
 * 18): it runs from a request's first byte, not through the idle time before it.
 */
const serverOptions = (limits: HttpLimits): http.ServerOptions => ({
  keepAliveTimeout: limits.keepAliveTimeoutMs,
  headersTimeout: limits.headersTimeoutMs,
  requestTimeout: limits.requestTimeoutMs,
  connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(limits.headersTimeoutMs / 4))),
  maxHeaderSize: MaxHeaderBytes,
  // Node's own answer to a missing Host is a bare 400: `emit` below answers problem+json instead.
  requireHostHeader: false
})

/**
 * A complete HTTP/1.1 answer for a socket on which no response can be written any more (a request
 * that could not be read, a connection over the bound): problem+json, framed by its length, and
 * the connection closed.
 */
export const rawProblem = (errorsUrl: string, errorCode: ErrorCode, detail: string, instance: string, headers: Record<string, string> = {}) => {
  const answer = problemAnswer(errorsUrl, errorCode, detail, instance, headers)
  const lines = [
    `HTTP/1.1 ${answer.status} ${http.STATUS_CODES[answer.status] ?? ""}`,
    `content-type: ${answer.contentType}`,
    `content-length: ${Buffer.byteLength(answer.body)}`,
    "connection: close",
    ...Object.entries(answer.headers).map(([name, value]) => `${name}: ${value}`)
  ]
  return `${lines.join("\r\n")}\r\n\r\n${answer.body}`
}

/** What node's `clientError` codes become (node answers them with bare 400, 408, 413 and 431). */
const clientErrorProblem = (code: string | undefined, limits: HttpLimits): { readonly errorCode: ErrorCode; readonly detail: string } => {
  switch (code) {
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return {
        errorCode: "REQUEST_TIMEOUT",
        detail: `The request was not received in time: headers within ${limits.headersTimeoutMs} ms, the whole request within ${limits.requestTimeoutMs} ms.`
      }
    case "HPE_HEADER_OVERFLOW":
      return { errorCode: "REQUEST_HEADER_FIELDS_TOO_LARGE", detail: `The request line and headers exceed ${MaxHeaderBytes} bytes.` }
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return { errorCode: "PAYLOAD_TOO_LARGE", detail: "The chunk extensions of the request body are too large." }
    default:
      return { errorCode: "INVALID_REQUEST", detail: "The request is not valid HTTP/1.1." }
  }
}

/** Node's in-flight response of a socket: it decides whether anything may still be written on it. */
const inFlight = (socket: net.Socket) => (socket as net.Socket & { _httpMessage?: http.ServerResponse | null })._httpMessage ?? undefined

/** Ends a socket with `answer`; destroys it once the client has had the time to read the answer, if it has not closed first. */
const closeWith = (socket: net.Socket, answer: string) => {
  const linger = setTimeout(() => socket.destroy(), LingerMs)
  linger.unref()
  socket.once("close", () => clearTimeout(linger))
  socket.end(answer)
}

/** HTTP/1.1 makes Host mandatory (RFC 9112, 3.2); HTTP/1.0 has none to send. */
const lacksHost = (request: http.IncomingMessage) => request.httpVersion !== "1.0" && request.headers.host === undefined

/**
 * The node server under every port of the platform: the limits above, problem+json for what node
 * would answer bare, a bound on the connections of one client address, and a shutdown that does
 * not wait for keep-alive timeouts. The gateway's public port passes its request listener; the
 * Effect servers add theirs.
 */
export class LimitedServer extends http.Server {
  readonly #limits: HttpLimits
  readonly #errorsUrl: string
  readonly #perClient = new Map<string, number>()
  readonly #answered = new WeakSet<net.Socket>()

  constructor(limits: HttpLimits, errorsUrl: string, listener?: http.RequestListener) {
    super(serverOptions(limits), listener)
    this.#limits = limits
    this.#errorsUrl = errorsUrl
    this.on("clientError", (error: NodeJS.ErrnoException, socket: net.Socket) => this.#answerClientError(error, socket))
    // Node reads every connection through its one `connection` listener: taking it lets a
    // connection over the bound be answered before node parses anything of it.
    const parseConnection = this.listeners("connection")
    if (parseConnection.length !== 1) throw new Error("node:http no longer reads connections through a single listener")
    const [parse] = parseConnection as Array<(socket: net.Socket) => void>
    this.removeListener("connection", parse!)
    this.on("connection", (socket: net.Socket) => {
      if (this.#admit(socket)) parse!.call(this, socket)
    })
  }

  #answerClientError(error: NodeJS.ErrnoException, socket: net.Socket) {
    const response = inFlight(socket)
    // As node does: nothing more once the answer has begun, or the client has gone.
    if (this.#answered.has(socket) || error.code === "ECONNRESET" || !socket.writable || response?.headersSent === true) {
      return void socket.destroy()
    }
    this.#answered.add(socket)
    const { detail, errorCode } = clientErrorProblem(error.code, this.#limits)
    closeWith(socket, rawProblem(this.#errorsUrl, errorCode, detail, response?.req.url ?? ""))
  }

  #admit(socket: net.Socket): boolean {
    const max = this.#limits.maxConnectionsPerClient
    if (max === 0) return true
    const client = socket.remoteAddress ?? "unknown"
    const open = this.#perClient.get(client) ?? 0
    if (open >= max) {
      // Not yet node's socket: nobody else listens to its errors (a reset would end the process).
      socket.on("error", () => socket.destroy())
      socket.resume()
      closeWith(
        socket,
        rawProblem(this.#errorsUrl, "RATE_LIMITED", `This client address already holds ${max} open connections, the most allowed. Reuse or close one.`, "", {
          "retry-after": "1"
        })
      )
      return false
    }
    this.#perClient.set(client, open + 1)
    socket.once("close", () => {
      const left = (this.#perClient.get(client) ?? 1) - 1
      if (left === 0) this.#perClient.delete(client)
      else this.#perClient.set(client, left)
    })
    return true
  }

  /** A request without Host is refused here, for every listener, rather than by node's bare 400. */
  override emit(event: string | symbol, ...args: Array<any>): boolean {
    if (event === "request") {
      const [request, response] = args as [http.IncomingMessage, http.ServerResponse]
      if (lacksHost(request)) {
        response.shouldKeepAlive = false
        writeProblem(response, this.#errorsUrl, "INVALID_REQUEST", "An HTTP/1.1 request must carry a Host header.", request.url ?? "")
        return true
      }
    }
    return super.emit(event as string, ...args)
  }

  /**
   * Stops accepting, then closes each connection as soon as it is idle: node closes those idle
   * now, but one whose request ends later would stay open for its keep-alive timeout, beyond a
   * pod's grace period. In-flight requests get `ShutdownGraceMs`, then their sockets are cut.
   */
  override close(callback?: (error?: Error) => void): this {
    const idle = setInterval(() => this.closeIdleConnections(), 50)
    const cut = setTimeout(() => this.closeAllConnections(), ShutdownGraceMs)
    idle.unref()
    cut.unref()
    this.once("close", () => {
      clearInterval(idle)
      clearTimeout(cut)
    })
    return super.close(callback)
  }
}
