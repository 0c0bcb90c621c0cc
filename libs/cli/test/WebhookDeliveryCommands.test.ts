import { expect, layer } from "@effect/vitest"
import { DeliveryAttempt, WebhookDelivery } from "@portfolio/domain"
import { DateTime, Effect, Layer } from "effect"
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { FakeAdmin, FakeAdminLive, FakeSecret, FixedTime } from "./support/FakeAdminApis.js"
import { FakeWebhookAdmin, FakeWebhookAdminLive, subscriptionId } from "./support/FakeWebhookAdminApi.js"
import { controlCharactersIn, portfolio, problem } from "./support/RunCli.js"

const Fakes = Layer.merge(FakeAdminLive, FakeWebhookAdminLive)
const repoRoot = fileURLToPath(new URL("../../..", import.meta.url))

const deliveryId = (n: number) => `66666666-0000-4000-8000-${String(n).padStart(12, "0")}`
const eventId = (n: number) => `77777777-0000-4000-8000-${String(n).padStart(12, "0")}`

/** A delivery of the first subscription, `hours` after the fixed time. */
const delivery = (n: number, status: WebhookDelivery["status"], hours: number) =>
  new WebhookDelivery({
    id: deliveryId(n),
    subscriptionId: subscriptionId(1),
    eventId: eventId(n),
    eventType: "das.submitted",
    status,
    failureReason: status === "failed" ? "attempts_exhausted" : null,
    attempts: status === "pending" ? 1 : 8,
    nextAttemptAt: status === "pending" ? DateTime.add(FixedTime, { hours: hours + 1 }) : null,
    createdAt: DateTime.add(FixedTime, { hours }),
    updatedAt: DateTime.add(FixedTime, { hours })
  })

/** Newest first, as the dispatcher lists them. */
const Deliveries = [delivery(3, "pending", 2), delivery(2, "failed", 1), delivery(1, "failed", 0)]

/** A tenant with one subscription and its deliveries, the attempts of the newest failed one. */
const seeded = Effect.gen(function*() {
  const { state } = yield* FakeWebhookAdmin
  if (state.subscriptions.size > 0) return state
  yield* portfolio(["tenant", "create", "acme", "--admin-email", "admin@acme.example"])
  yield* portfolio(["webhook", "create", "--tenant", "acme", "--url", "https://hooks.acme.example/in"])
  for (const d of Deliveries) state.deliveries.set(d.id, d)
  state.attempts.set(deliveryId(2), [
    new DeliveryAttempt({
      id: "88888888-0000-4000-8000-000000000001", deliveryId: deliveryId(2), attempt: 1, startedAt: DateTime.add(FixedTime, { hours: 1 }),
      durationMs: 10_000, statusCode: null, error: "timeout", responseBody: ""
    }),
    new DeliveryAttempt({
      id: "88888888-0000-4000-8000-000000000002", deliveryId: deliveryId(2), attempt: 2, startedAt: DateTime.add(FixedTime, { hours: 2 }),
      durationMs: 42, statusCode: 503, error: null, responseBody: "Service Unavailable\nretry later"
    })
  ])
  return state
})

const lastCall = Effect.map(FakeWebhookAdmin, ({ state }) => state.calls.at(-1))

layer(Fakes)("portfolio webhook: deliveries", (it) => {
  it.effect("deliveries sends the status and limit, the contract's default limit without --limit, and prints them newest first", () =>
    Effect.gen(function*() {
      yield* seeded
      const id = subscriptionId(1)
      const all = yield* portfolio(["webhook", "deliveries", id, "--json"])
      expect(yield* lastCall).toBe(`GET /admin/webhooks/${id}/deliveries {"limit":50}`)
      expect(all.code).toBe(0)
      expect(JSON.parse(all.stdout)).toEqual(Deliveries.map((d) => ({
        id: d.id,
        subscriptionId: id,
        eventId: d.eventId,
        eventType: "das.submitted",
        status: d.status,
        failureReason: d.failureReason,
        attempts: d.attempts,
        nextAttemptAt: d.nextAttemptAt === null ? null : DateTime.formatIso(d.nextAttemptAt),
        createdAt: DateTime.formatIso(d.createdAt),
        updatedAt: DateTime.formatIso(d.updatedAt)
      })))
      const failed = yield* portfolio(["webhook", "deliveries", id, "--status", "failed", "--limit", "1"])
      expect(yield* lastCall).toBe(`GET /admin/webhooks/${id}/deliveries {"status":"failed","limit":1}`)
      expect(failed.stdout).toBe(
        `${deliveryId(2)}  failed     das.submitted  event ${eventId(2)}  8 attempts, created 2026-07-01T11:00:00.000Z (attempts exhausted)`
      )
      const pending = yield* portfolio(["webhook", "deliveries", id, "--status", "pending"])
      expect(pending.stdout).toBe(
        `${deliveryId(3)}  pending    das.submitted  event ${eventId(3)}  1 attempt, created 2026-07-01T12:00:00.000Z, next attempt 2026-07-01T13:00:00.000Z`
      )
      expect((yield* portfolio(["webhook", "deliveries", id, "--status", "succeeded"])).stdout).toBe(`No succeeded delivery for webhook ${id}.`)
      for (const bad of [["--status", "lost"], ["--limit", "0"], ["--limit", "1001"]]) {
        expect((yield* portfolio(["webhook", "deliveries", id, ...bad])).code).toBe(2)
      }
    }))

  it.effect("attempts prints each POST with its outcome; an unknown delivery exits 1 with the 404", () =>
    Effect.gen(function*() {
      yield* seeded
      const json = yield* portfolio(["webhook", "attempts", deliveryId(2), "--json"])
      expect(JSON.parse(json.stdout)).toMatchObject([{ attempt: 1, statusCode: null, error: "timeout" }, { attempt: 2, statusCode: 503, durationMs: 42 }])
      const human = yield* portfolio(["webhook", "attempts", deliveryId(2)])
      expect(human.stdout.split("\n")).toEqual([
        "#1  2026-07-01T11:00:00.000Z  no answer: timeout in 10000 ms",
        "#2  2026-07-01T12:00:00.000Z  503 in 42 ms  Service Unavailable"
      ])
      expect((yield* portfolio(["webhook", "attempts", deliveryId(1)])).stdout).toBe(`No attempt of delivery ${deliveryId(1)} yet.`)
      const unknown = yield* portfolio(["webhook", "attempts", deliveryId(99), "--json"])
      expect([unknown.code, unknown.stdout]).toEqual([1, ""])
      expect(JSON.parse(unknown.stderr)).toEqual(
        problem("NOT_FOUND", "not-found", "Not found", 404, `Webhook delivery '${deliveryId(99)}' does not exist.`)
      )
    }))

  it.effect("attempts shows the control characters of a receiver's answer as escapes; --json keeps the answer exact", () =>
    Effect.gen(function*() {
      const state = yield* seeded
      // What a receiver answered: clear the screen, home the cursor, a fake line, a C1 CSI (U+009B).
      const responseBody = "\u001b[2J\u001b[HAll deliveries OK\rok \u009b31mred\u007f\nsecond line"
      state.attempts.set(deliveryId(3), [
        new DeliveryAttempt({
          id: "88888888-0000-4000-8000-000000000003", deliveryId: deliveryId(3), attempt: 1, startedAt: DateTime.add(FixedTime, { hours: 2 }),
          durationMs: 7, statusCode: 500, error: null, responseBody
        })
      ])
      const human = yield* portfolio(["webhook", "attempts", deliveryId(3)])
      expect(human.code).toBe(0)
      expect(human.stdout).toBe("#1  2026-07-01T12:00:00.000Z  500 in 7 ms  \\x1b[2J\\x1b[HAll deliveries OK\\rok \\x9b31mred\\x7f")
      expect(controlCharactersIn(human.stdout)).toEqual([])
      const json = yield* portfolio(["webhook", "attempts", deliveryId(3), "--json"])
      expect(JSON.parse(json.stdout)[0].responseBody).toBe(responseBody)
      // Written so that the document itself holds no C1 control either: the same value, escaped.
      expect(json.stdout).toContain("\\u009b31mred\\u007f")
    }))

  it.effect("recover sends the time in UTC and prints how many deliveries were re-sent", () =>
    Effect.gen(function*() {
      const state = yield* seeded
      const id = subscriptionId(1)
      const run = yield* portfolio(["webhook", "recover", id, "--since", "2026-07-01T12:30+02:00"])
      expect(yield* lastCall).toBe(`POST /admin/webhooks/${id}/recover {"since":"2026-07-01T10:30:00.000Z"}`)
      expect(run.stdout).toBe(`1 delivery of webhook ${id} since 2026-07-01T10:30:00.000Z re-sent.`)
      expect(state.deliveries.get(deliveryId(2))?.status).toBe("pending")
      const json = yield* portfolio(["webhook", "recover", id, "--since", "2026-07-01", "--json"])
      expect(JSON.parse(json.stdout)).toEqual({ redelivered: 1 })
      const none = yield* portfolio(["webhook", "recover", id, "--since", "2026-07-01"])
      expect(none.stdout).toBe(`0 deliveries of webhook ${id} since 2026-07-01T00:00:00.000Z re-sent.`)
      const calls = state.calls.length
      const noZone = yield* portfolio(["webhook", "recover", id, "--since", "2026-07-01T10:00:00"])
      expect(noZone.code).toBe(2)
      expect(noZone.stderr).toContain("has no time zone: add Z (UTC) or an offset such as +02:00.")
      expect((yield* portfolio(["webhook", "recover", id])).code).toBe(2)
      expect(state.calls.length).toBe(calls)
    }))

  it.effect("redeliver queues one delivery again; on a disabled subscription it exits 1 with the 409", () =>
    Effect.gen(function*() {
      yield* seeded
      const run = yield* portfolio(["webhook", "redeliver", deliveryId(1), "--json"])
      expect(yield* lastCall).toBe(`POST /admin/deliveries/${deliveryId(1)}/redeliver`)
      expect(JSON.parse(run.stdout)).toMatchObject({ id: deliveryId(1), status: "pending", failureReason: null })
      const human = yield* portfolio(["webhook", "redeliver", deliveryId(1)])
      expect(human.stdout).toBe(`Delivery ${deliveryId(1)} (das.submitted) queued again; 8 attempts so far.`)
      yield* portfolio(["webhook", "disable", subscriptionId(1)])
      const refused = yield* portfolio(["webhook", "redeliver", deliveryId(1)])
      expect([refused.code, refused.stdout]).toEqual([1, ""])
      expect(JSON.parse(refused.stderr)).toEqual(
        problem("CONFLICT", "conflict", "Conflict", 409, `Subscription '${subscriptionId(1)}' is disabled: enable it first.`)
      )
      yield* portfolio(["webhook", "enable", subscriptionId(1)])
    }))
})

// The child process signs with the wall's clock, so the fakes must verify with it, not the test clock.
layer(Fakes, { excludeTestServices: true })("portfolio webhook: the bin", (it) => {
  it.effect("the real bin reads WEBHOOK_ADMIN_URL and signs for the dispatcher; its 404 exits 1", () =>
    Effect.gen(function*() {
      yield* seeded
      const { urls } = yield* FakeAdmin
      const { url } = yield* FakeWebhookAdmin
      // An empty data folder: no local.env to fall back on, so only the variables given here count.
      yield* Effect.acquireUseRelease(
        Effect.sync(() => mkdtempSync(join(tmpdir(), "portfolio-webhook-"))),
        (dataDir) =>
          Effect.gen(function*() {
            const env = {
              PATH: process.env["PATH"] ?? "/usr/bin:/bin",
              DATA_DIR: dataDir,
              INTERNAL_SECRET: FakeSecret,
              PROVISIONING_ADMIN_URL: urls.provisioning,
              WEBHOOK_ADMIN_URL: url
            }
            const bin = (args: ReadonlyArray<string>) =>
              Effect.callback<{ readonly code: number; readonly stdout: string; readonly stderr: string }>((resume) => {
                execFile(process.execPath, ["libs/cli/bin/portfolio.mjs", ...args], { cwd: repoRoot, env }, (error, stdout, stderr) =>
                  resume(Effect.succeed({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr })))
              })
            const listed = yield* bin(["webhook", "list", "--tenant", "acme", "--json"])
            expect(listed.stderr).toBe("")
            expect(JSON.parse(listed.stdout).map((s: { id: string }) => s.id)).toEqual([subscriptionId(1)])
            const missing = yield* bin(["webhook", "show", subscriptionId(42)])
            expect(missing.code).toBe(1)
            expect(JSON.parse(missing.stderr)).toMatchObject({ status: 404, detail: `Webhook subscription '${subscriptionId(42)}' does not exist.` })
          }),
        (dataDir) => Effect.sync(() => rmSync(dataDir, { recursive: true, force: true }))
      )
    }))
})
