import { describe, expect, it } from "@effect/vitest"
import { selfSignedCertificate } from "@portfolio/platform/testing"
import { Context, Effect, Fiber, Layer, Option } from "effect"
import type { LookupAddress } from "node:dns"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer as createHttpServer, type IncomingHttpHeaders, type RequestListener } from "node:http"
import { createServer as createHttpsServer } from "node:https"
import { createServer as createTcpServer, isIP, type LookupFunction, type Server } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { guardedLookup, WebhookSenderUndici, type WebhookSenderUndiciSettings } from "../../src/adapters/undici/WebhookSenderUndici.js"
import { RefusedAddress } from "../../src/domain/AttemptErrors.js"
import { targetUrlProblem } from "../../src/domain/TargetPolicy.js"
import { type SendOutcome, WebhookSender } from "../../src/ports/WebhookSender.js"

/** A server on an ephemeral loopback port, counting connections; every connection ends with it. */
const listening = (server: Server, host: string) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly port: number; readonly connections: () => number }, Error>((resume) => {
      let connections = 0
      server.on("connection", () => connections++)
      server.once("error", (error) => resume(Effect.fail(error)))
      server.listen(0, host, () => {
        const address = server.address()
        if (address === null || typeof address === "string") return resume(Effect.die(new Error("no TCP address")))
        resume(Effect.succeed({ port: address.port, connections: () => connections }))
      })
    }),
    () => Effect.callback<void>((resume) => {
      server.close(() => resume(Effect.void))
      if ("closeAllConnections" in server && typeof server.closeAllConnections === "function") server.closeAllConnections()
    })
  )

/** A TCP listener that hangs up on whoever connects: it only counts. */
const tcpListener = (host: string) => listening(createTcpServer((socket) => socket.destroy()), host)

interface Received {
  readonly method: string | undefined
  readonly url: string | undefined
  readonly headers: IncomingHttpHeaders
  readonly body: string
  /** Whether the connection that carried it is gone. */
  readonly hungUp: () => boolean
}

const httpReceiver = (answer: RequestListener) =>
  Effect.gen(function*() {
    const received: Array<Received> = []
    const server = createHttpServer((request, response) => {
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => {
        const socket = request.socket
        const body = Buffer.concat(chunks).toString("utf8")
        received.push({ method: request.method, url: request.url, headers: request.headers, body, hungUp: () => socket.destroyed })
        answer(request, response)
      })
    })
    return { ...(yield* listening(server, "127.0.0.1")), received }
  })

/** A port nothing listens on: bound, read, released. */
const closedPort = Effect.map(Effect.scoped(tcpListener("127.0.0.1")), ({ port }) => port)

const senderWith = (settings: WebhookSenderUndiciSettings) =>
  Effect.map(Layer.build(WebhookSenderUndici(settings)), (context) => Context.get(context, WebhookSender))

/** Names answered without DNS; anything else is ENOTFOUND, so no test reaches a real resolver. */
const tableLookup = (table: Readonly<Record<string, ReadonlyArray<string>>>): LookupFunction => (hostname, options, callback) => {
  const addresses = table[hostname.toLowerCase().replace(/\.$/, "")]
  if (addresses === undefined) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND", syscall: "getaddrinfo" }), "", 0)
  const answer: Array<LookupAddress> = addresses.map((address) => ({ address, family: isIP(address) }))
  if (options.all === true) return callback(null, answer)
  callback(null, answer[0]!.address, answer[0]!.family)
}

const loopbackNames = tableLookup({
  "v4.loopback.test": ["127.0.0.1"],
  "v6.loopback.test": ["::1"],
  "mapped.loopback.test": ["::ffff:127.0.0.1"],
  "compatible.loopback.test": ["::127.0.0.1"],
  "nat64.loopback.test": ["64:ff9b::7f00:1"],
  "zero.test": ["0.0.0.0"],
  // Loopback only: were the guard broken, no test would reach a public address. A public address
  // beside a forbidden one is checked without the network, in "answers node in the shape...".
  "dual.test": ["127.0.0.1", "::1"],
  "dual6.test": ["::1", "127.0.0.1"],
  "metadata.test": ["169.254.169.254"],
  "private.test": ["10.0.0.1"]
})

const post = (url: string) => ({ url, headers: { "content-type": "application/json" }, body: "{\"type\":\"ping\"}" })
const failed = (outcome: SendOutcome) => (outcome._tag === "Failed" ? outcome.error : `answered ${outcome.status}`)
/** Both words of a failure: the tenant's, recorded with the attempt, and the operator's. */
const words = (outcome: SendOutcome) => (outcome._tag === "Failed" ? { error: outcome.error, detail: outcome.detail } : { error: `answered ${outcome.status}`, detail: undefined })
/** A pause before checking that nothing happened (no connection made, no hang-up). */
const settle = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
/**
 * Waits, for at most 5 s, until what the other side must see has happened: a fixed pause is too
 * short on a loaded machine (the CI's, at a load of 15).
 */
const eventually = (condition: () => boolean) =>
  Effect.promise(async () => {
    for (let i = 0; i < 250 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 20))
  })

describe("WebhookSenderUndici: the address policy at connection time (docs/product-rules.md#webhooks)", () => {
  it.live("sends nothing to loopback however the target is spelled or resolved", () =>
    Effect.gen(function*() {
      const v4 = yield* tcpListener("127.0.0.1")
      // Without IPv6 loopback on the machine, the IPv6 forms still must be refused, on the IPv4 port.
      const v6 = Option.getOrUndefined(yield* Effect.option(tcpListener("::1")))
      const sender = yield* senderWith({ timeoutMs: 2_000, allowPrivateTargets: false, lookup: loopbackNames })
      const [p, p6] = [v4.port, v6?.port ?? v4.port]
      const forms: ReadonlyArray<readonly [string, string]> = [
        ...["127.0.0.1", "2130706433", "0177.0.0.1", "0x7f000001", "0x7f.1", "127.1", "127.0.0.1.", "%31%32%37.0.0.1", "\uff10x7f.1", "0x7F.0.0.1", "017700000001"]
          .map((host) => [`https://${host}:${p}/hook`, "refused target 127.0.0.1: loopback"] as const),
        [`https://0.0.0.0:${p}/`, "refused target 0.0.0.0: unspecified"],
        [`https://0:${p}/`, "refused target 0.0.0.0: unspecified"],
        ...["[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[0:0:0:0:0:ffff:7f00:1]", "[::FFFF:7F00:0001]"]
          .map((host) => [`https://${host}:${p}/`, "refused target ::ffff:7f00:1: loopback"] as const),
        [`https://[::127.0.0.1]:${p}/`, "refused target ::7f00:1: loopback"],
        [`https://[64:ff9b::127.0.0.1]:${p}/`, "refused target 64:ff9b::7f00:1: loopback"],
        [`https://[2002:7f00:1::]:${p}/`, "refused target 2002:7f00:1::: loopback"],
        [`https://[::1]:${p6}/`, "refused target ::1: loopback"],
        [`https://[0:0:0:0:0:0:0:1]:${p6}/`, "refused target ::1: loopback"],
        [`https://[::]:${p6}/`, "refused target ::: unspecified"],
        ...["localhost", "LOCALHOST.", "foo.localhost", "a.b.localhost", "localhost.localdomain"].flatMap((host) => [
          [`https://${host}:${p}/`, `refused target ${host.toLowerCase()}: loopback`] as const,
          [`https://${host}:${p6}/`, `refused target ${host.toLowerCase()}: loopback`] as const
        ]),
        [`http://127.0.0.1:${p}/`, "refused target: the scheme must be https"],
        [`http://v4.loopback.test:${p}/`, "refused target: the scheme must be https"],
        [`https://v4.loopback.test:${p}/hook?x=1`, "refused target 127.0.0.1 (resolved from v4.loopback.test): loopback"],
        [`https://V4.LOOPBACK.TEST.:${p}/`, "refused target 127.0.0.1 (resolved from v4.loopback.test.): loopback"],
        [`https://v6.loopback.test:${p6}/`, "refused target ::1 (resolved from v6.loopback.test): loopback"],
        [`https://mapped.loopback.test:${p}/`, "refused target ::ffff:127.0.0.1 (resolved from mapped.loopback.test): loopback"],
        [`https://compatible.loopback.test:${p}/`, "refused target ::127.0.0.1 (resolved from compatible.loopback.test): loopback"],
        [`https://nat64.loopback.test:${p}/`, "refused target 64:ff9b::7f00:1 (resolved from nat64.loopback.test): loopback"],
        [`https://zero.test:${p}/`, "refused target 0.0.0.0 (resolved from zero.test): unspecified"],
        [`https://dual.test:${p}/`, "refused target 127.0.0.1 (resolved from dual.test): loopback"],
        [`https://dual6.test:${p6}/`, "refused target ::1 (resolved from dual6.test): loopback"],
        [`https://metadata.test:${p}/`, "refused target 169.254.169.254 (resolved from metadata.test): metadata"],
        // Not loopback: were the guard broken, the POST would wait for its timeout, and fail the count below.
        [`https://private.test:${p}/`, "refused target 10.0.0.1 (resolved from private.test): private"]
      ]
      expect(forms.length).toBeGreaterThanOrEqual(40)
      const outcomes = yield* Effect.forEach(forms, ([url]) => sender.send(post(url)), { concurrency: 8 })
      // The tenant reads that the address is not public, never which it is; the operator's log has it.
      expect(outcomes.map(words)).toEqual(forms.map(([, detail]) => ({
        error: detail.startsWith("refused target: ") ? detail.replace("refused target: ", "refused: ") : RefusedAddress,
        detail
      })))
      yield* settle
      expect([v4.connections(), v6?.connections() ?? 0]).toEqual([0, 0])
    }))

  it.live("reaches the same listener when private targets are allowed: the count above is real", () =>
    Effect.gen(function*() {
      const v4 = yield* tcpListener("127.0.0.1")
      const sender = yield* senderWith({ timeoutMs: 2_000, allowPrivateTargets: true, lookup: loopbackNames })
      const outcome = yield* sender.send(post(`https://v4.loopback.test:${v4.port}/`))
      expect(outcome._tag).toBe("Failed")
      expect(v4.connections()).toBe(1)
    }))

  it.live("refuses a name re-pointed at loopback after it was checked (DNS rebinding)", () =>
    Effect.gen(function*() {
      const v4 = yield* tcpListener("127.0.0.1")
      let calls = 0
      const rebinding: LookupFunction = (hostname, options, callback) =>
        tableLookup({ "rebind.test": [calls++ === 0 ? "93.184.215.14" : "127.0.0.1"] })(hostname, options, callback)
      const url = `https://rebind.test:${v4.port}/hook`
      // What a check at subscription time sees: a name, and a public address behind it.
      expect(targetUrlProblem(url, { allowPrivateTargets: false })).toBeUndefined()
      const seen = yield* Effect.callback<string>((resume) => rebinding("rebind.test", {}, (_, address) => resume(Effect.succeed(String(address)))))
      expect(seen).toBe("93.184.215.14")
      const sender = yield* senderWith({ timeoutMs: 2_000, allowPrivateTargets: false, lookup: rebinding })
      const outcomes = yield* Effect.forEach([1, 2], () => sender.send(post(url)))
      expect(outcomes.map(words)).toEqual([1, 2].map(() => ({ error: RefusedAddress, detail: "refused target 127.0.0.1 (resolved from rebind.test): loopback" })))
      yield* settle
      expect(v4.connections()).toBe(0)
    }))

  it("answers node in the shape it asked for", async () => {
    const lookup = guardedLookup(tableLookup({
      "public.test": ["93.184.215.14", "2606:4700::1111"],
      "mixed.test": ["93.184.215.14", "2606:4700::1111", "::ffff:10.0.0.1"]
    }))
    const ask = (hostname: string, all: boolean) =>
      new Promise<Array<unknown>>((resolve) => lookup(hostname, { all }, (...answer) => resolve(answer)))
    expect(await ask("public.test", false)).toEqual([null, "93.184.215.14", 4])
    expect(await ask("public.test", true)).toEqual([null, [{ address: "93.184.215.14", family: 4 }, { address: "2606:4700::1111", family: 6 }]])
    // Refused when ANY answer is forbidden: node may try each of them.
    for (const all of [true, false]) {
      const [refused, address] = await ask("mixed.test", all)
      expect(refused).toMatchObject({ code: "ERR_WEBHOOK_REFUSED_TARGET", message: "refused target ::ffff:10.0.0.1 (resolved from mixed.test): private" })
      expect(address).toBe("")
    }
    const [missing] = await ask("nowhere.test", false)
    expect(missing).toMatchObject({ code: "ENOTFOUND" })
  })

  it.live("names a failed resolution", () =>
    Effect.gen(function*() {
      const sender = yield* senderWith({ timeoutMs: 2_000, allowPrivateTargets: false, lookup: loopbackNames })
      expect(words(yield* sender.send(post("https://nowhere.test/")))).toEqual({ error: "dns: ENOTFOUND", detail: "getaddrinfo ENOTFOUND nowhere.test" })
    }))
})

describe("WebhookSenderUndici: the POST and its answer (private targets allowed)", () => {
  const relaxed = (timeoutMs = 2_000) => senderWith({ timeoutMs, allowPrivateTargets: true })

  it.live("delivers the exact body and headers, and keeps the connection for the next one", () =>
    Effect.gen(function*() {
      const receiver = yield* httpReceiver((_, response) => response.writeHead(200, { "content-type": "text/plain" }).end("ok"))
      const sender = yield* relaxed()
      const headers = { "content-type": "application/json", "webhook-id": "msg_01", "webhook-signature": "v1,c2lnbmF0dXJl" }
      const body = JSON.stringify({ type: "application.created", data: { name: "Gestion des congés ✓" } })
      const outcome = yield* sender.send({ url: `http://127.0.0.1:${receiver.port}/hooks/in?tenant=acme`, headers, body })
      expect(outcome).toMatchObject({ _tag: "Answered", status: 200, responseBody: "ok" })
      expect(outcome.durationMs).toBeGreaterThanOrEqual(0)
      const [request] = receiver.received
      expect(request).toMatchObject({ method: "POST", url: "/hooks/in?tenant=acme", body, headers })
      expect(request?.headers["content-length"]).toBe(String(Buffer.byteLength(body)))
      yield* Effect.forEach([1, 2, 3, 4], () => sender.send({ url: `http://127.0.0.1:${receiver.port}/hooks/in`, headers, body }))
      // undici may open a second connection when the next POST is dispatched in the same tick that
      // the previous answer ends, before its connection is free again: a bare undici loop does too.
      expect(receiver.received.length).toBe(5)
      expect(receiver.connections()).toBeLessThanOrEqual(2)
    }))

  it.live("does not follow a redirect: a 302 is the answer", () =>
    Effect.gen(function*() {
      const elsewhere = yield* httpReceiver((_, response) => response.end())
      const receiver = yield* httpReceiver((_, response) => response.writeHead(302, { location: `http://127.0.0.1:${elsewhere.port}/` }).end("moved"))
      const outcome = yield* (yield* relaxed()).send(post(`http://127.0.0.1:${receiver.port}/`))
      expect(outcome).toMatchObject({ _tag: "Answered", status: 302, responseBody: "moved" })
      yield* settle
      expect([elsewhere.connections(), elsewhere.received.length]).toEqual([0, 0])
    }))

  it.live("answers 4xx and 5xx as they are, and an empty body as empty", () =>
    Effect.gen(function*() {
      const receiver = yield* httpReceiver((request, response) =>
        request.url === "/gone" ? response.writeHead(410).end("gone") : request.url === "/empty" ? response.writeHead(204).end() : response.writeHead(503).end("busy")
      )
      const sender = yield* relaxed()
      const outcomes = yield* Effect.forEach(["/gone", "/empty", "/busy"], (path) => sender.send(post(`http://127.0.0.1:${receiver.port}${path}`)))
      expect(outcomes.map((outcome) => outcome._tag === "Answered" && [outcome.status, outcome.responseBody])).toEqual([[410, "gone"], [204, ""], [503, "busy"]])
    }))

  it.live("fails with a timeout when the receiver never answers", () =>
    Effect.gen(function*() {
      const receiver = yield* httpReceiver(() => {})
      const outcome = yield* (yield* relaxed(300)).send(post(`http://127.0.0.1:${receiver.port}/`))
      expect(failed(outcome)).toBe("timeout after 300 ms")
      expect(outcome.durationMs).toBeGreaterThanOrEqual(290)
      expect(outcome.durationMs).toBeLessThan(1_500)
    }))

  it.live("reads 1 KB of a 5 MB answer that never ends, then hangs up", () =>
    Effect.gen(function*() {
      const receiver = yield* httpReceiver((_, response) => {
        response.writeHead(200, { "content-type": "text/plain" })
        response.write("x".repeat(5 * 1024 * 1024))
      })
      const outcome = yield* (yield* relaxed(5_000)).send(post(`http://127.0.0.1:${receiver.port}/`))
      expect(outcome).toMatchObject({ _tag: "Answered", status: 200, responseBody: "x".repeat(1024) })
      expect(outcome.durationMs).toBeLessThan(2_000)
      yield* eventually(() => receiver.received[0]?.hungUp() === true)
      expect(receiver.received[0]?.hungUp()).toBe(true)
    }))

  it.live("keeps whole characters when the cap falls inside one", () =>
    Effect.gen(function*() {
      const receiver = yield* httpReceiver((_, response) => response.end("é".repeat(2_000)))
      const outcome = yield* (yield* relaxed()).send(post(`http://127.0.0.1:${receiver.port}/`))
      expect(outcome).toMatchObject({ _tag: "Answered", responseBody: "é".repeat(512) })
    }))

  it.live("keeps an answer holding NUL characters storable: each becomes U+FFFD", () =>
    Effect.gen(function*() {
      const receiver = yield* httpReceiver((_, response) => response.end("ok\u0000done\u0000"))
      const outcome = yield* (yield* relaxed()).send(post(`http://127.0.0.1:${receiver.port}/`))
      expect(outcome).toMatchObject({ _tag: "Answered", status: 200, responseBody: "ok\ufffddone\ufffd" })
    }))

  it.live("answers a POST once, and stops one under way when interrupted", () =>
    Effect.gen(function*() {
      const sender = yield* relaxed(5_000)
      const quick = yield* httpReceiver((_, response) => response.end("ok"))
      const answered = yield* sender.send(post(`http://127.0.0.1:${quick.port}/`))
      expect(answered).toMatchObject({ _tag: "Answered", status: 200, responseBody: "ok" })

      const silent = yield* httpReceiver(() => {})
      const sending = yield* Effect.forkChild(sender.send(post(`http://127.0.0.1:${silent.port}/`)))
      yield* eventually(() => silent.received.length === 1)
      yield* Fiber.interrupt(sending)
      yield* eventually(() => silent.received[0]?.hungUp() === true)
      yield* settle
      expect(silent.received[0]?.hungUp()).toBe(true)
    }))

  it.live("names the TLS failure of a receiver whose certificate is not trusted", () =>
    Effect.gen(function*() {
      const dir = yield* Effect.acquireRelease(Effect.sync(() => mkdtempSync(join(tmpdir(), "webhook-tls-"))), (dir) => Effect.sync(() => rmSync(dir, { recursive: true })))
      const { cert, key } = yield* Effect.promise(() => selfSignedCertificate(dir))
      const server = createHttpsServer({ cert: readFileSync(cert), key: readFileSync(key) }, (_, response) => response.end("ok"))
      const receiver = yield* listening(server, "127.0.0.1")
      const outcome = yield* (yield* relaxed()).send(post(`https://127.0.0.1:${receiver.port}/`))
      expect(words(outcome)).toEqual({ error: "tls: DEPTH_ZERO_SELF_SIGNED_CERT", detail: expect.stringContaining("self-signed certificate") })
    }))

  it.live("fails with 'connection refused' on a closed port, the address in the operator's words only", () =>
    Effect.gen(function*() {
      const port = yield* closedPort
      const outcome = yield* (yield* relaxed()).send(post(`http://127.0.0.1:${port}/`))
      // The address that refused is the operator's to read, not the tenant's.
      expect(words(outcome)).toEqual({ error: "connection refused", detail: `connect ECONNREFUSED 127.0.0.1:${port}` })
    }))

  it.live("stops the request when the delivery is interrupted, and closes its connections with the layer", () =>
    Effect.gen(function*() {
      const silent = yield* httpReceiver(() => {})
      const answering = yield* httpReceiver((_, response) => response.end("ok"))
      yield* Effect.scoped(Effect.gen(function*() {
        const sender = yield* relaxed(10_000)
        const fiber = yield* Effect.forkChild(sender.send(post(`http://127.0.0.1:${silent.port}/`)))
        yield* eventually(() => silent.received.length === 1)
        yield* Fiber.interrupt(fiber)
        yield* eventually(() => silent.received[0]?.hungUp() === true)
        expect(silent.received[0]?.hungUp()).toBe(true)
        yield* sender.send(post(`http://127.0.0.1:${answering.port}/`))
        yield* settle
        expect(answering.received[0]?.hungUp()).toBe(false)
      }))
      yield* eventually(() => answering.received[0]?.hungUp() === true)
      expect(answering.received[0]?.hungUp()).toBe(true)
    }))
})
