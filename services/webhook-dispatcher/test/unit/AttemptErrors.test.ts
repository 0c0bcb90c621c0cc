import { UnitOfWork } from "@portfolio/platform/sql"
import { Effect, Layer, Logger } from "effect"
import { describe, expect, it } from "vitest"
import { DispatcherSettings } from "../../src/Config.js"
import { attemptErrorOf, plainError, RefusedAddress, RefusedTarget, refusalOf } from "../../src/domain/AttemptErrors.js"
import { newSigningSecret } from "../../src/domain/Signature.js"
import { type AttemptRecord, type ClaimedDelivery, DeliveryRepository, type DeliveryRepositoryShape } from "../../src/ports/DeliveryRepository.js"
import { DispatcherOutbox } from "../../src/ports/DispatcherOutbox.js"
import { RetryWakeups } from "../../src/ports/RetryWakeups.js"
import { SubscriptionRepository, type SubscriptionRepositoryShape } from "../../src/ports/SubscriptionRepository.js"
import { WebhookSender } from "../../src/ports/WebhookSender.js"
import { type AttemptServices, attemptDelivery } from "../../src/usecases/AttemptDelivery.js"

const timeout = "timeout after 10000 ms"

/** An error as node reports it: a message, a code and the fields of the call that failed. */
const nodeError = (message: string, fields: Record<string, unknown>) => Object.assign(new Error(message), fields)

const refused = nodeError("connect ECONNREFUSED 10.1.2.3:443", { code: "ECONNREFUSED", syscall: "connect", address: "10.1.2.3", port: 443 })

// Each error with the words a tenant reads of it; the operator's detail is the message as reported.
const cases: ReadonlyArray<readonly [string, unknown, string]> = [
  ["a connection refused", refused, "connection refused"],
  ["every address of a name refused (happy eyeballs)", new AggregateError([refused, nodeError("connect ECONNREFUSED [fd00::5]:443", { code: "ECONNREFUSED" })]), "connection refused"],
  ["a refusal wrapped by undici", new Error("fetch failed", { cause: refused }), "connection refused"],
  ["a reset", nodeError("read ECONNRESET 10.1.2.3:443", { code: "ECONNRESET" }), "connection reset"],
  ["an unreachable host", nodeError("connect EHOSTUNREACH 172.16.0.9:443 - Local (10.0.0.2:53412)", { code: "EHOSTUNREACH" }), "host unreachable"],
  ["a name that does not resolve", nodeError("getaddrinfo ENOTFOUND db.cluster.internal", { code: "ENOTFOUND", syscall: "getaddrinfo", hostname: "db.cluster.internal" }), "dns: ENOTFOUND"],
  ["a resolver that does not answer", nodeError("getaddrinfo EAI_AGAIN hooks.corp.example", { code: "EAI_AGAIN", syscall: "getaddrinfo" }), "dns: EAI_AGAIN"],
  ["a certificate for another name", nodeError("Hostname/IP does not match certificate's altnames: IP: 10.0.0.5 is not in the cert's list: ", { code: "ERR_TLS_CERT_ALTNAME_INVALID", host: "10.0.0.5" }), "tls: ERR_TLS_CERT_ALTNAME_INVALID"],
  ["an untrusted certificate", nodeError("self-signed certificate", { code: "DEPTH_ZERO_SELF_SIGNED_CERT" }), "tls: DEPTH_ZERO_SELF_SIGNED_CERT"],
  ["a connect timeout", nodeError("Connect Timeout Error (attempted address: 10.1.2.3:443, timeout: 10000ms)", { code: "UND_ERR_CONNECT_TIMEOUT" }), timeout],
  ["an answer that is not HTTP", nodeError("Parse Error: Expected HTTP/ at 10.1.2.3", { code: "HPE_INVALID_CONSTANT" }), "http: HPE_INVALID_CONSTANT"],
  ["an error of another code", nodeError("something at 10.1.2.3", { code: "EPROTOTYPE" }), "error: EPROTOTYPE"],
  ["an error without a code", new Error("socket hang up on 10.1.2.3:443"), "request failed"],
  ["a code that is not one", nodeError("odd", { code: "connect to 10.1.2.3" }), "request failed"],
  ["an address the policy refused at connection time", new RefusedTarget("hooks.example.com", "10.0.0.1", "private"), RefusedAddress]
]

/** An IPv4 or IPv6 address, or one of the internal names above. */
const addressLike = /\d+\.\d+\.\d+\.\d+|[0-9a-f]*::[0-9a-f]|internal|corp|example\.com/i

describe("the words of a failed attempt: the tenant's, and the operator's (docs/security.md, \"Outbound addresses\")", () => {
  it("tells the tenant the kind of failure, never an address or a name behind it; the operator keeps the message", () => {
    const words = cases.map(([what, error]) => [what, attemptErrorOf(error, timeout)] as const)
    expect(words.map(([what, { error }]) => [what, error])).toEqual(cases.map(([what, , error]) => [what, error]))
    for (const [what, { error }] of words) expect(error, what).not.toMatch(addressLike)
    expect(attemptErrorOf(refused, timeout).detail).toBe("connect ECONNREFUSED 10.1.2.3:443")
    expect(attemptErrorOf(new Error("fetch failed", { cause: refused }), timeout).detail).toBe("connect ECONNREFUSED 10.1.2.3:443")
    expect(attemptErrorOf(new RefusedTarget("hooks.example.com", "10.0.0.1", "private"), timeout).detail)
      .toBe("refused target 10.0.0.1 (resolved from hooks.example.com): private")
  })

  it("says the same of a host refused before any connection, and keeps what is wrong with the URL itself", () => {
    expect(refusalOf({ _tag: "Host", host: "169.254.169.254", reason: "metadata" })).toEqual({ error: RefusedAddress, detail: "refused target 169.254.169.254: metadata" })
    expect(refusalOf({ _tag: "Host", host: "metadata.google.internal", reason: "metadata" }).error).toBe(RefusedAddress)
    expect(refusalOf({ _tag: "Url", detail: "the scheme must be https" })).toEqual({ error: "refused: the scheme must be https", detail: "refused target: the scheme must be https" })
    expect(plainError("interrupted")).toEqual({ error: "interrupted", detail: "interrupted" })
  })
})

const claimed: ClaimedDelivery = {
  delivery: {
    id: "delivery-1",
    subscriptionId: "subscription-1",
    eventId: "event-1",
    eventType: "application.created",
    status: "pending",
    failureReason: null,
    attempts: 0,
    nextAttemptAt: new Date(),
    createdAt: new Date(),
    updatedAt: new Date()
  },
  roundAttempt: 1,
  body: "{}",
  traceparent: null,
  lease: "lease",
  target: {
    id: "subscription-1",
    tenantId: "tenant",
    url: "https://hooks.example.com/in?token=receiver-secret",
    state: "enabled",
    secret: newSigningSecret(new Uint8Array(32).fill(7)),
    previousSecret: null,
    previousSecretExpiresAt: null
  }
}

/** One attempt at a time, retried after a minute, disabled at the tenth failure in a row. */
const settings = Layer.succeed(DispatcherSettings, {
  retrySchedule: [60_000],
  disableAfterFailures: 10,
  timeoutMs: 10_000,
  allowPrivateTargets: false,
  concurrency: 1,
  concurrencyPerSubscription: 1,
  sweepIntervalMs: 60_000
})

describe("a failed attempt (usecases/AttemptDelivery.ts)", () => {
  it("records the tenant's words, and logs the address for the operator as a warning, without the URL", async () => {
    const recorded: Array<AttemptRecord> = []
    const logged: Array<{ readonly level: string; readonly message: unknown }> = []
    const words = attemptErrorOf(new RefusedTarget("hooks.example.com", "10.0.0.1", "private"), timeout)
    const layers = Layer.mergeAll(
      settings,
      Layer.succeed(WebhookSender, {
        send: () => Effect.succeed({ _tag: "Failed" as const, ...words, durationMs: 3 })
      }),
      Layer.succeed(DeliveryRepository, {
        complete: (attempt) => Effect.sync(() => recorded.push(attempt)).pipe(Effect.as({ consecutiveFailures: 1, state: "enabled" as const }))
      } as Partial<DeliveryRepositoryShape> as DeliveryRepositoryShape),
      Layer.succeed(RetryWakeups, { schedule: () => Effect.void }),
      Layer.succeed(UnitOfWork, { run: (work) => work }),
      Logger.layer([Logger.make(({ logLevel, message }) => logged.push({ level: logLevel.toUpperCase(), message }))])
    ) as Layer.Layer<AttemptServices>
    await Effect.runPromise(attemptDelivery(claimed.delivery.id, { claimed, leasedAt: Date.now() }).pipe(Effect.provide(layers)))

    expect(recorded.map((attempt) => attempt.error)).toEqual([RefusedAddress])
    expect(logged).toEqual([{
      level: "WARN",
      message: [
        "webhook target refused by the address policy",
        {
          subscriptionId: "subscription-1",
          deliveryId: "delivery-1",
          attemptId: recorded[0]!.id,
          error: RefusedAddress,
          detail: "refused target 10.0.0.1 (resolved from hooks.example.com): private"
        }
      ]
    }])
    expect(JSON.stringify(logged)).not.toContain("receiver-secret")
  })
})

describe("the failure that reaches the threshold (usecases/AttemptDelivery.ts)", () => {
  it("is recorded, and the subscription disabled with its waiting deliveries held and its admins told, in one unit of work", async () => {
    // Each step with the depth of units of work it ran in, and how many units there were.
    const steps: Array<readonly [string, number]> = []
    let depth = 0
    let units = 0
    const step = (name: string) => Effect.sync(() => void steps.push([name, depth]))
    const scheduled: Array<string> = []
    const layers = Layer.mergeAll(
      settings,
      Layer.succeed(WebhookSender, { send: () => Effect.succeed({ _tag: "Answered" as const, status: 500, responseBody: "down", durationMs: 3 }) }),
      Layer.succeed(DeliveryRepository, {
        complete: () => Effect.as(step("complete"), { consecutiveFailures: 10, state: "enabled" as const }),
        failPending: () => Effect.as(step("failPending"), 0)
      } as Partial<DeliveryRepositoryShape> as DeliveryRepositoryShape),
      Layer.succeed(SubscriptionRepository, { disableForFailures: () => Effect.as(step("disable"), true) } as Partial<SubscriptionRepositoryShape> as SubscriptionRepositoryShape),
      Layer.succeed(DispatcherOutbox, { append: () => step("notice") } as unknown as DispatcherOutbox["Service"]),
      Layer.succeed(RetryWakeups, { schedule: (deliveryId) => Effect.sync(() => void scheduled.push(deliveryId)) }),
      Layer.succeed(UnitOfWork, {
        run: (work) =>
          Effect.suspend(() => {
            units++
            depth++
            return work
          }).pipe(Effect.ensuring(Effect.sync(() => depth--)))
      })
    ) as Layer.Layer<AttemptServices>
    // The admins' notice names the tenant and the subscription by their UUIDs.
    const ofTenant: ClaimedDelivery = {
      ...claimed,
      target: { ...claimed.target, id: "7d3f1c2a-5b6e-4f80-9a1b-2c3d4e5f6a7b", tenantId: "0b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e" }
    }
    await Effect.runPromise(attemptDelivery(ofTenant.delivery.id, { claimed: ofTenant, leasedAt: Date.now() }).pipe(Effect.provide(layers)))
    expect({ steps, units, scheduled }).toEqual({ steps: [["complete", 1], ["disable", 1], ["failPending", 1], ["notice", 1]], units: 1, scheduled: [] })
  })
})
