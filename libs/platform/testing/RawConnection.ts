import net from "node:net"

export interface RawAnswer {
  /** 0 when the server closed without answering. */
  readonly status: number
  /** Lower-cased names. */
  readonly headers: Record<string, string>
  readonly body: string
}

const parseHead = (head: string) => {
  const [statusLine = "", ...lines] = head.split("\r\n")
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(":")
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  return { status: Number(statusLine.split(" ")[1] ?? "0"), headers }
}

/**
 * A client connection written byte by byte: what HTTP clients refuse to send (garbage, headers
 * trickled, no Host) and what they hide (whether a kept-alive socket is still the same one).
 * Answers are read one at a time, framed by their content length.
 */
export class RawConnection {
  #received = Buffer.alloc(0)
  #closed = false
  #wake: (() => void) | undefined
  readonly closed: Promise<void>

  private constructor(readonly socket: net.Socket) {
    socket.on("data", (chunk: Buffer) => {
      this.#received = Buffer.concat([this.#received, chunk])
      this.#wake?.()
    })
    socket.on("error", () => {})
    this.closed = new Promise((resolve) =>
      socket.on("close", () => {
        this.#closed = true
        this.#wake?.()
        resolve()
      })
    )
  }

  static open(port: number, host = "127.0.0.1"): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, host, () => resolve(new RawConnection(socket)))
      socket.once("error", reject)
    })
  }

  get isClosed() {
    return this.#closed
  }

  send(bytes: string) {
    if (!this.socket.destroyed) this.socket.write(bytes, "latin1")
  }

  /** Sends `bytes` every `everyMs` until the server closes the connection (a slow client). */
  trickle(bytes: string, everyMs: number) {
    const timer = setInterval(() => this.send(bytes), everyMs)
    void this.closed.then(() => clearInterval(timer))
    return this.closed
  }

  /**
   * The next answer: its head, then as many body bytes as its content length says (none after a
   * HEAD request). What is there when the server closes is the answer; after `giveUpMs` without
   * one, status 0, so that a server that never answers fails the case instead of hanging it.
   */
  async next(options: { readonly head?: boolean; readonly giveUpMs?: number } = {}): Promise<RawAnswer> {
    const deadline = Date.now() + (options.giveUpMs ?? 10_000)
    for (;;) {
      const text = this.#received.toString("latin1")
      const end = text.indexOf("\r\n\r\n")
      if (end >= 0) {
        const { headers, status } = parseHead(text.slice(0, end))
        const length = options.head === true ? 0 : Number(headers["content-length"] ?? "0")
        const bodyBytes = this.#received.subarray(Buffer.byteLength(text.slice(0, end + 4), "latin1"))
        if (bodyBytes.length >= length || this.#closed) {
          this.#received = bodyBytes.subarray(length)
          return { status, headers, body: bodyBytes.subarray(0, length).toString("utf8") }
        }
      } else if (this.#closed) {
        return { status: 0, headers: {}, body: text }
      }
      if (Date.now() > deadline) return { status: 0, headers: {}, body: text }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()) + 1)
        this.#wake = () => {
          clearTimeout(timer)
          resolve()
        }
      })
    }
  }

  close() {
    this.socket.destroy()
    return this.closed
  }
}

/** Sends `bytes` on a fresh connection and reads one answer. */
export const exchange = async (port: number, bytes: string, options?: { readonly head?: boolean }) => {
  const connection = await RawConnection.open(port)
  connection.send(bytes)
  const answer = await connection.next(options)
  await connection.close()
  return answer
}
