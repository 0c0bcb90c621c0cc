import { createHmac } from "node:crypto"
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import type { AddressInfo } from "node:net"

/** One POST a receiver got, with the time it arrived. */
export interface ReceivedDelivery {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
  readonly at: number
}

/** A request the receiver has taken and not answered yet: the sender's port says which process sent it. */
export interface HeldRequest {
  readonly path: string
  readonly remotePort: number
  readonly since: number
}

/**
 * A webhook receiver on loopback: records every request; answers what `answer` says for its path
 * (200 by default). Paths let one receiver stand for several subscriptions.
 */
export class WebhookReceiver {
  readonly received: Array<ReceivedDelivery> = []
  answer: (path: string) => { readonly status: number; readonly headers?: Record<string, string>; readonly body?: string } = () => ({ status: 200 })
  /** How long each answer waits, so that a sender is caught mid-request by a fault. */
  delayMs = 0
  readonly #held = new Set<HeldRequest>()
  #server: Server | undefined

  /** The requests taken and not answered yet (read, or waiting their `delayMs`): the senders caught mid-request. */
  get holding(): ReadonlyArray<HeldRequest> {
    return [...this.#held]
  }

  /** Listens on loopback unless told an address (the rehearsal's pods reach the host on their network's gateway). */
  async start(host = "127.0.0.1") {
    this.#server = createServer((request, response) => {
      const held: HeldRequest = { path: request.url ?? "/", remotePort: request.socket.remotePort ?? 0, since: Date.now() }
      this.#held.add(held)
      response.once("close", () => this.#held.delete(held))
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => {
        const path = request.url ?? "/"
        this.received.push({ path, headers: request.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() })
        const { body, headers, status } = this.answer(path)
        const reply = () => {
          this.#held.delete(held)
          response.writeHead(status, headers).end(body ?? "ok")
        }
        if (this.delayMs > 0) setTimeout(reply, this.delayMs)
        else reply()
      })
    })
    await new Promise<void>((resolve) => this.#server!.listen(0, host, resolve))
    return this
  }

  url(path: string) {
    const { address, port } = this.#server!.address() as AddressInfo
    return `http://${address}:${port}${path}`
  }

  at(path: string) {
    return this.received.filter((delivery) => delivery.path === path)
  }

  /** Waits until `path` received at least `count` requests, or `timeoutMs` passed; returns what it got. */
  async waitFor(path: string, count: number, timeoutMs = 15_000) {
    const deadline = Date.now() + timeoutMs
    while (this.at(path).length < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
    return this.at(path)
  }

  async stop() {
    this.#server?.closeAllConnections()
    await new Promise((resolve) => this.#server?.close(resolve) ?? resolve(undefined))
  }
}

/** Independent of the product's code: the documented X-Service-Signature of `secret` over `<timestamp>.<body>`. */
export const expectedSignature = (secret: string, timestamp: string, body: string) =>
  `sha256=${createHmac("sha256", Buffer.from(secret.slice("whsec_".length), "base64")).update(`${timestamp}.${body}`).digest("hex")}`
