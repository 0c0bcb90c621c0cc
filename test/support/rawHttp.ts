import net from "node:net"
import type { Reply } from "./http.js"

/**
 * Sends `request` as raw bytes on a fresh connection and reads the answer until the server closes
 * it: the only way to send what every HTTP client refuses or normalises first (`GET http://[bad/x`).
 * The request should carry `Connection: close`. Written without ending the socket, since a
 * half-closed client may count as gone. A server that never answers gives status 0 after `giveUpMs`.
 */
export const sendRaw = (url: string, request: string, giveUpMs = 10_000): Promise<Reply> => {
  const { hostname, port } = new URL(url)
  return new Promise((resolve) => {
    const chunks: Array<Buffer> = []
    const socket = net.connect(Number(port), hostname, () => socket.write(request, "latin1"))
    socket.on("data", (chunk: Buffer) => chunks.push(chunk))
    socket.on("error", () => {})
    socket.setTimeout(giveUpMs, () => socket.destroy())
    socket.on("close", () => resolve(parseAnswer(Buffer.concat(chunks).toString("latin1"))))
  })
}

const parseAnswer = (received: string): Reply => {
  const split = received.indexOf("\r\n\r\n")
  const head = split < 0 ? received : received.slice(0, split)
  const text = split < 0 ? "" : received.slice(split + 4)
  const [statusLine = "", ...lines] = head.split("\r\n")
  const headers = new Headers()
  for (const line of lines) {
    const colon = line.indexOf(":")
    if (colon > 0) headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim())
  }
  const contentType = headers.get("content-type") ?? ""
  let body: unknown = undefined
  if (/json/.test(contentType) && text.length > 0) body = JSON.parse(text)
  return { status: Number(statusLine.split(" ")[1] ?? "0"), headers, contentType, text, body }
}
