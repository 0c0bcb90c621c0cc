/**
 * Just enough of RFC 2045/2046/5322 to read what nodemailer writes: unfolded headers and the
 * decoded parts of a single-level multipart message (7bit, quoted-printable or base64, UTF-8).
 * Anything else throws, so that a test never passes by reading the wrong thing.
 */
export interface MimePart {
  readonly headers: ReadonlyMap<string, string>
  readonly body: string
}

export interface MimeMessage {
  readonly headers: ReadonlyMap<string, string>
  readonly parts: ReadonlyArray<MimePart>
}

const splitHead = (raw: string) => {
  const end = raw.indexOf("\r\n\r\n")
  if (end < 0) throw new Error("no blank line after the headers")
  const headers = new Map<string, string>()
  for (const line of raw.slice(0, end).replace(/\r\n(?=[ \t])/g, "").split("\r\n")) {
    const colon = line.indexOf(":")
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim())
  }
  return { headers, body: raw.slice(end + 4) }
}

const decodeQuotedPrintable = (body: string) =>
  decodeURIComponent(body.replace(/=\r\n/g, "").replace(/%/g, "%25").replace(/=([0-9A-F]{2})/g, "%$1"))

const decode = (headers: ReadonlyMap<string, string>, body: string) => {
  const encoding = (headers.get("content-transfer-encoding") ?? "7bit").toLowerCase()
  const text = encoding === "quoted-printable"
    ? decodeQuotedPrintable(body)
    : encoding === "base64"
    ? Buffer.from(body, "base64").toString("utf8")
    : encoding === "7bit"
    ? body
    : undefined
  if (text === undefined) throw new Error(`unexpected transfer encoding ${encoding}`)
  return text.replace(/\r\n/g, "\n")
}

export const readMimeMessage = (raw: string): MimeMessage => {
  const { body, headers } = splitHead(raw)
  const boundary = /boundary="?([^";]+)"?/.exec(headers.get("content-type") ?? "")?.[1]
  if (boundary === undefined) return { headers, parts: [{ headers, body: decode(headers, body) }] }
  const closing = body.indexOf(`\r\n--${boundary}--`)
  if (closing < 0) throw new Error("multipart body without its closing boundary")
  const parts = body.slice(0, closing).split(`--${boundary}\r\n`).slice(1).map((chunk) => {
    const part = splitHead(chunk.replace(/\r\n$/, ""))
    return { headers: part.headers, body: decode(part.headers, part.body) }
  })
  return { headers, parts }
}
