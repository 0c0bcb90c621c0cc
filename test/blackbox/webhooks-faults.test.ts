import { createDatabase, freePort, type FreshDatabase, restartableJetStream } from "@portfolio/platform/testing"
import { randomBytes, randomUUID } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { afterAll, beforeAll, expect, it } from "vitest"
import { adminCall, type AdminService } from "../support/adminCall.js"
import { ServiceSupervisor } from "../support/serviceSupervisor.js"
import { WebhookReceiver } from "../support/webhookReceiver.js"

/**
 * Nothing committed is lost, nothing rolled back is sent: 1,000 changes while the dispatcher and
 * the referential (whose relay publishes) are killed with SIGKILL and NATS is restarted, on a
 * private nats-server so that the rest of the suite's NATS is left alone.
 */
const secret = randomBytes(32).toString("hex")
const tenantId = randomUUID()
const Events = 1_000
const supervisor = new ServiceSupervisor()
const receiver = new WebhookReceiver()
const storeDir = mkdtempSync(join(tmpdir(), "faults-js-"))
let database: FreshDatabase
let nats: Awaited<ReturnType<typeof restartableJetStream>>
const urls: Partial<Record<AdminService, string>> = {}

const admin = (service: AdminService, method: string, path: string, body?: unknown) =>
  adminCall(secret, urls[service]!, service, method, path, body === undefined ? {} : { body })

beforeAll(async () => {
  await receiver.start()
  database = await createDatabase("faults")
  nats = await restartableJetStream(storeDir)
  const [api, referentialAdmin, dispatcherAdmin] = [await freePort(), await freePort(), await freePort()]
  urls.referential = `http://127.0.0.1:${referentialAdmin}`
  urls["webhook-dispatcher"] = `http://127.0.0.1:${dispatcherAdmin}`
  const common = {
    PATH: process.env["PATH"] ?? "/usr/bin:/bin",
    HOST: "127.0.0.1",
    DATABASE_URL: database.url,
    NATS_URL: nats.url,
    INTERNAL_SECRET: secret,
    LOG_LEVEL: "Warn"
  }
  await supervisor.start("referential", { ...common, PORT: String(api), ADMIN_PORT: String(referentialAdmin) }, [urls.referential])
  await supervisor.start("webhook-dispatcher", {
    ...common,
    ADMIN_PORT: String(dispatcherAdmin),
    WEBHOOK_ALLOW_PRIVATE_TARGETS: "true",
    WEBHOOK_TIMEOUT: "2s",
    WEBHOOK_SWEEP_INTERVAL: "2s",
    WEBHOOK_RETRY_SCHEDULE: "1s,2s,4s,8s,16s,32s"
  }, [urls["webhook-dispatcher"]])
  const created = await admin("webhook-dispatcher", "POST", `/admin/tenants/${tenantId}/webhooks`, { url: receiver.url("/faults") })
  expect(created.status, created.text).toBe(201)
}, 180_000)

afterAll(async () => {
  await supervisor.stopAll()
  await nats?.stop()
  await receiver.stop()
  await database?.drop()
  rmSync(storeDir, { recursive: true, force: true })
}, 60_000)

/** One change, retried until the referential answers it (it may be down, or die with the request in flight). */
const change = async (n: number) => {
  for (;;) {
    const reply = await admin("referential", "PUT", `/admin/tenants/${tenantId}/applications/FAULT-${n}`, { name: `Fault ${n}`, criticality: "IMPORTANT" })
      .catch(() => undefined)
    if (reply !== undefined && reply.status < 300) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const committedEventIds = async () => {
  const client = new pg.Client({ connectionString: database.url })
  await client.connect()
  try {
    return new Set((await client.query<{ id: string }>("SELECT id FROM referential.outbox")).rows.map((row) => row.id))
  } finally {
    await client.end()
  }
}

it("delivers every committed event at least once through kill -9 of both services and a NATS restart", async () => {
  let next = 0
  // Writers wait at the next fault's milestone until that fault begins: every fault lands while
  // changes are still being written, however long the previous one took on a busy machine (a
  // restart waited out under load let the writers finish before the last fault).
  let gate = 0
  const faultsAt: Array<number> = []
  const writers = Array.from({ length: 8 }, async () => {
    while (next < Events) {
      if (next >= gate) {
        await new Promise((resolve) => setTimeout(resolve, 20))
        continue
      }
      await change(next++)
    }
  })
  const chaos = (async () => {
    const faults: ReadonlyArray<() => Promise<void>> = [
      () => supervisor.crash("webhook-dispatcher"),
      () => supervisor.crash("referential"),
      () => nats.restart(),
      () => supervisor.crash("webhook-dispatcher"),
      () => supervisor.crash("referential")
    ]
    for (const [i, fault] of faults.entries()) {
      // Spread over the writes by their progress, not by the clock: the writes got faster, and the
      // last faults, 1.5 s apart, came after them.
      const milestone = Math.floor(((i + 1) * Events) / (faults.length + 1))
      gate = milestone
      while (next < milestone) await new Promise((resolve) => setTimeout(resolve, 20))
      // Every fault lands while changes are still being written, or it proves nothing.
      expect(next, `fault ${i + 1} came after the last change`).toBeLessThan(Events)
      faultsAt.push(next)
      const faulted = fault()
      gate = i + 1 < faults.length ? Math.floor(((i + 2) * Events) / (faults.length + 1)) : Events
      await faulted
    }
  })()
  await Promise.all([...writers, chaos])

  // A DAS submitted twice: the refused second submission's transaction rolls back, and its event with it.
  const das = await admin("referential", "POST", `/admin/tenants/${tenantId}/das`, { applicationCode: "FAULT-1", title: "Once" })
  expect((await admin("referential", "POST", `/admin/tenants/${tenantId}/das/${das.body.id}/submit`)).status).toBe(200)
  expect((await admin("referential", "POST", `/admin/tenants/${tenantId}/das/${das.body.id}/submit`)).status).toBe(409)

  const committed = await committedEventIds()
  expect(committed.size).toBe(Events + 1)
  const deadline = Date.now() + 120_000
  const delivered = () => new Set(receiver.at("/faults").map((d) => d.headers["x-service-event-id"] as string))
  while ([...committed].some((id) => !delivered().has(id)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 250))
  const got = delivered()
  const lost = [...committed].filter((id) => !got.has(id))
  const unknown = [...got].filter((id) => !committed.has(id))
  const posts = receiver.at("/faults").length
  console.log(`faults at changes ${faultsAt.join(", ")}: ${committed.size} committed events, ${got.size} delivered, ${posts - got.size} duplicate POSTs, ${lost.length} lost`)
  expect(lost).toEqual([])
  expect(unknown).toEqual([])
  expect(receiver.at("/faults").filter((d) => d.headers["x-service-event"] === "das.submitted")).toHaveLength(1)
}, 400_000)
