import { Effect } from "effect"
import http from "node:http"
import type { AddressInfo } from "node:net"

export interface SeenRequest {
  readonly method: string
  readonly url: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
  readonly socketPort: number
}

export type Reply =
  | { readonly status: number; readonly headers?: Record<string, string>; readonly body?: string; readonly delayMs?: number }
  /** The connection is cut once the request was read, with no answer: an upstream that closed a pooled connection under it. */
  | { readonly drop: true }

/**
 * A real HTTP server on a loopback port standing for a service behind the gateway: it records what
 * it receives and answers what the test's `route` says.
 */
export const fakeUpstream = (route: (request: SeenRequest) => Reply) =>
  Effect.acquireRelease(
    Effect.callback<{
      readonly url: URL
      readonly seen: Array<SeenRequest>
      /** URLs of requests whose connection the caller closed before the answer was sent. */
      readonly abandoned: Array<string>
      readonly server: http.Server
    }>((resume) => {
      const seen: Array<SeenRequest> = []
      const abandoned: Array<string> = []
      const server = http.createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (chunk: Buffer) => chunks.push(chunk))
        req.on("end", () => {
          const request = {
            method: req.method ?? "",
            url: req.url ?? "",
            headers: req.headers,
            body: Buffer.concat(chunks).toString("utf8"),
            socketPort: req.socket.remotePort ?? 0
          }
          seen.push(request)
          const reply = route(request)
          if ("drop" in reply) return void req.socket.destroy()
          res.once("close", () => {
            if (!res.headersSent) abandoned.push(request.url)
          })
          const send = () => {
            res.writeHead(reply.status, reply.headers ?? {})
            res.end(reply.body ?? "")
          }
          if (reply.delayMs === undefined) send()
          else setTimeout(send, reply.delayMs)
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({ url: new URL(`http://127.0.0.1:${port}`), seen, abandoned, server }))
      })
    }),
    ({ server }) => Effect.callback<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
  )

/** A loopback URL on which nothing listens: a port just released by the system. */
export const closedPortUrl = Effect.callback<URL>((resume) => {
  const server = http.createServer()
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as AddressInfo
    server.close(() => resume(Effect.succeed(new URL(`http://127.0.0.1:${port}`))))
  })
})
