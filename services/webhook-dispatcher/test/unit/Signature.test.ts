import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { createHmac, randomBytes } from "node:crypto"
import { fileURLToPath } from "node:url"
import { deliveryHeaders, newSigningSecret, signingKey, UserAgent } from "../../src/domain/Signature.js"
import { type Receiver, readmeReceivers, startReceiver } from "../support/Receivers.js"

const eventId = "0f5c6a1e-8a43-4d4e-9a8e-2b7c1d9e4f10"
// Non-ASCII on purpose: every side must sign the UTF-8 bytes, not the UTF-16 string.
const body = JSON.stringify({
  id: eventId,
  type: "application.updated",
  createdAt: "2026-11-22T00:56:02.114Z",
  tenantId: "6a2b9a58-3f0e-4c55-9a53-0b5f0a8f1c11",
  data: { code: "CRM-01", name: "Gestion des réclamations ✓", revision: 2 }
})
const now = () => Math.floor(Date.now() / 1000)

const sign = (secrets: ReadonlyArray<string>, timestamp = now(), text = body, id = eventId) =>
  deliveryHeaders({
    keys: secrets.map((secret) => signingKey(secret)!),
    eventId: id,
    eventType: JSON.parse(text).type,
    deliveryId: "4b1d2a57-0c1e-4f7e-8d0e-6e3c1a2b9f00",
    timestamp,
    body: text
  })

/** Written here rather than imported: what a receiver would write from the README's description. */
const expectedServiceSignature = (secret: string, timestamp: string, text: string) =>
  `sha256=${createHmac("sha256", Buffer.from(secret.slice("whsec_".length), "base64")).update(`${timestamp}.${text}`, "utf8").digest("hex")}`

describe("signing secrets", () => {
  it("are whsec_ and the base64 of the random bytes, which are the key", () => {
    const random = randomBytes(32)
    const secret = newSigningSecret(random)
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(signingKey(secret)).toEqual(random)
  })

  it("accept 24 bytes or more, canonical base64 only, behind the prefix", () => {
    expect(signingKey("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")).toHaveLength(24)
    expect([
      "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
      "whsec_",
      `whsec_${randomBytes(23).toString("base64")}`,
      "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS!",
      "whsec_MfKQ9r8GKYqrTwjU PD8ILPZIo2LaLaSw",
      `whsec_${"A".repeat(42)}-_`,
      // 32 zero bytes with an unused trailing bit set: node would decode it, yet no encoder writes it.
      `whsec_${"A".repeat(42)}B=`
    ].map(signingKey)).toEqual(Array.from({ length: 7 }, () => undefined))
  })
})

describe("delivery headers", () => {
  it("match the Standard Webhooks test vector", () => {
    const headers = deliveryHeaders({
      keys: [signingKey("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")!],
      eventId: "msg_p5jXN8AQM9LWM0D4loKWxJek",
      eventType: "application.created",
      deliveryId: "d",
      timestamp: 1614265330,
      body: "{\"test\": 2432232314}"
    })
    expect(headers["webhook-signature"]).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    expect(headers["webhook-id"]).toBe("msg_p5jXN8AQM9LWM0D4loKWxJek")
    expect(headers["webhook-timestamp"]).toBe("1614265330")
  })

  it("carry every header, one timestamp for both schemes, and X-Service-Signature over <timestamp>.<body>", () => {
    const secret = newSigningSecret(randomBytes(32))
    const headers = sign([secret], 1_795_305_654)
    expect(headers).toEqual({
      "content-type": "application/json",
      "user-agent": UserAgent,
      "x-service-signature": expectedServiceSignature(secret, "1795305654", body),
      "x-service-timestamp": "1795305654",
      "x-service-event": "application.updated",
      "x-service-event-id": eventId,
      "x-service-delivery-id": "4b1d2a57-0c1e-4f7e-8d0e-6e3c1a2b9f00",
      "webhook-id": eventId,
      "webhook-timestamp": "1795305654",
      "webhook-signature": expect.stringMatching(/^v1,[A-Za-z0-9+/]{43}=$/)
    })
    expect(UserAgent).toMatch(/^ArchitecturePortfolio-Webhooks\/1\.0 /)
  })

  it("during a rotation carry two signatures of each scheme, the current secret's first, each verifiable with its own secret", () => {
    const [current, previous] = [newSigningSecret(randomBytes(32)), newSigningSecret(randomBytes(32))]
    const headers = sign([current, previous])
    const timestamp = headers["x-service-timestamp"]!
    expect(headers["x-service-signature"]!.split(" ")).toEqual([
      expectedServiceSignature(current, timestamp, body),
      expectedServiceSignature(previous, timestamp, body)
    ])
    const standard = headers["webhook-signature"]!.split(" ")
    expect(standard).toHaveLength(2)
    expect(standard[0]).toBe(sign([current], Number(timestamp))["webhook-signature"])
    expect(standard[1]).toBe(sign([previous], Number(timestamp))["webhook-signature"])
  })

  it("refuse to sign without a key", () => {
    expect(() => deliveryHeaders({ keys: [], eventId, eventType: "x", deliveryId: "d", timestamp: now(), body })).toThrow()
  })
})

describe("a Python receiver (hmac, hashlib, base64) verifies both headers", () => {
  const verify = (secret: string, headers: Record<string, string>) => {
    const script = fileURLToPath(new URL("../support/verify_webhook.py", import.meta.url))
    const run = spawnSync("python3", [script], { input: JSON.stringify({ secret, headers, body }), encoding: "utf8" })
    expect(run.stderr).toBe("")
    return JSON.parse(run.stdout)
  }

  it("with one secret, and with either secret during a rotation", () => {
    const [current, previous, other] = [1, 2, 3].map(() => newSigningSecret(randomBytes(32))) as [string, string, string]
    const both = { serviceSignature: true, webhookSignature: true }
    expect(verify(current, sign([current]))).toEqual(both)
    expect(verify(current, sign([current, previous]))).toEqual(both)
    expect(verify(previous, sign([current, previous]))).toEqual(both)
    expect(verify(other, sign([current, previous]))).toEqual({ serviceSignature: false, webhookSignature: false })
    expect(verify("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", sign(["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"]))).toEqual(both)
  })
})

describe.each(readmeReceivers())("the README's $language receiver", (source) => {
  const [current, previous] = [newSigningSecret(randomBytes(32)), newSigningSecret(randomBytes(32))]
  let holdingCurrent: Receiver
  let holdingPrevious: Receiver

  beforeAll(async () => {
    ;[holdingCurrent, holdingPrevious] = await Promise.all([startReceiver(source, current), startReceiver(source, previous)])
  })
  afterAll(() => Promise.all([holdingCurrent?.stop(), holdingPrevious?.stop()]))

  it("accepts a signed delivery, and handles an event id once", async () => {
    expect(await holdingCurrent.post(sign([current]), body)).toBe(204)
    // Another attempt of the same event: answered 2xx, not handled again.
    expect(await holdingCurrent.post({ ...sign([current]), "x-service-delivery-id": "another attempt" }, body)).toBe(204)
    const next = { id: "7e1f0c2a-5b6d-4e8f-9a0b-1c2d3e4f5a6b", type: "das.submitted", tenantId: "6a2b9a58-3f0e-4c55-9a53-0b5f0a8f1c11", data: {} }
    const nextBody = JSON.stringify(next)
    expect(await holdingCurrent.post(sign([current], now(), nextBody, next.id), nextBody)).toBe(204)
    // The receiver prints in the order it handles: once the next event is printed, the first is printed as often as it ever will be.
    const lines = await holdingCurrent.linesUntil((line) => line.includes(next.id))
    expect(lines.filter((line) => line.includes("of tenant"))).toEqual([
      `application.updated ${eventId} of tenant 6a2b9a58-3f0e-4c55-9a53-0b5f0a8f1c11`,
      `das.submitted ${next.id} of tenant 6a2b9a58-3f0e-4c55-9a53-0b5f0a8f1c11`
    ])
  })

  it("refuses an altered body, another secret's signature, or a timestamp 6 minutes away", async () => {
    expect(await holdingCurrent.post(sign([current]), body.replace("CRM-01", "CRM-02"))).toBe(401)
    expect(await holdingCurrent.post(sign([previous]), body)).toBe(401)
    expect(await holdingCurrent.post(sign([current], now() - 6 * 60), body)).toBe(401)
    expect(await holdingCurrent.post(sign([current], now() + 6 * 60), body)).toBe(401)
    const headers = sign([current])
    expect(await holdingCurrent.post({ ...headers, "x-service-timestamp": String(Number(headers["x-service-timestamp"]) - 1) }, body)).toBe(401)
  })

  it("accepts a delivery made during a rotation whichever of the two secrets it holds", async () => {
    const headers = sign([current, previous])
    expect(await holdingCurrent.post(headers, body)).toBe(204)
    expect(await holdingPrevious.post(headers, body)).toBe(204)
  })
})
