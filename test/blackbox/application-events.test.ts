import { connect, type NatsConnection } from "@nats-io/transport-node"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, expect, it } from "vitest"
import type { CreatedTenant } from "../support/system.js"
import { useSharedSystem } from "../support/useSystem.js"

const system = useSharedSystem()

interface Received {
  readonly subject: string
  readonly messageId: string | undefined
  readonly traceparent: string | undefined
  readonly body: any
}

let nc: NatsConnection
let tenant: CreatedTenant
// Every application event of the NATS server, this file's tenant's kept: parallel systems share the stream.
const received: Array<Received> = []

beforeAll(async () => {
  nc = await connect({ servers: "nats://127.0.0.1:4222" })
  tenant = await system.createTenant("events-blackbox")
  nc.subscribe("events.referential.>", {
    callback: (_error, msg) => {
      const body = msg.json<any>()
      if (body?.tenantId !== tenant.id) return
      received.push({ subject: msg.subject, messageId: msg.headers?.get("Nats-Msg-Id"), traceparent: msg.headers?.get("traceparent"), body })
    }
  })
  await nc.flush()
}, 120_000)

afterAll(async () => {
  await nc?.close()
})

/** Waits for the relay (it publishes every 200 ms) to have delivered `count` events of the tenant. */
const eventsReceived = async (count: number, subject = "events.referential.application.") => {
  const matching = () => received.filter((event) => event.subject.startsWith(subject))
  for (let attempt = 0; attempt < 150 && matching().length < count; attempt++) await new Promise((resolve) => setTimeout(resolve, 100))
  return matching()
}

it("announces a creation, then an update with its changes, and nothing for a PUT that changes nothing", async () => {
  const application = { code: "APP-EVENTS", name: "Events", criticality: "IMPORTANT", rtoHours: 24 }
  await system.putApplication(tenant, application)
  await system.putApplication(tenant, { ...application, criticality: "MISSION_CRITICAL", description: "announced" })
  await system.putApplication(tenant, { ...application, criticality: "MISSION_CRITICAL", description: "announced" })
  // A fourth write after the no-op: once its event is in, the no-op's would have been too.
  await system.putApplication(tenant, { ...application, criticality: "MISSION_CRITICAL", description: "announced", rtoHours: 4 })
  const events = await eventsReceived(3)
  expect(events.map((event) => [event.subject, event.body.type, event.body.data.revision])).toEqual([
    ["events.referential.application.created", "application.created", 1],
    ["events.referential.application.updated", "application.updated", 2],
    ["events.referential.application.updated", "application.updated", 3]
  ])
  for (const event of events) {
    expect(event.messageId).toBe(event.body.id)
    expect(event.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/)
    expect(Object.keys(event.body).sort()).toEqual(["createdAt", "data", "id", "tenantId", "type"])
  }
  const read = await system.api((await system.createPat(tenant, "read")).token).get("/referentiel/applications/APP-EVENTS")
  const [created, updated] = events.map((event) => event.body)
  expect(created.data).toMatchObject({
    code: "APP-EVENTS",
    name: "Events",
    criticality: "IMPORTANT",
    applicationVip: false,
    rtoHours: 24,
    status: "ACTIVE",
    revision: 1
  })
  expect(created.data.changes).toBeUndefined()
  expect(updated.data).toMatchObject({
    criticality: "MISSION_CRITICAL",
    applicationVip: true,
    description: "announced",
    revision: 2,
    changes: [{ field: "criticality", oldValue: "IMPORTANT", newValue: "MISSION_CRITICAL" }]
  })
  expect(events[2]!.body.data.changes).toEqual([{ field: "rtoHours", oldValue: "24", newValue: "4" }])
  // `data` is the single-application read, plus revision and changes.
  const { changes: _changes, revision: _revision, ...latest } = events[2]!.body.data
  expect({ status: read.status, body: read.body }).toEqual({ status: 200, body: latest })
}, 120_000)

it("announces a DAS submitted with `portfolio das submit`, the record as submitted in data", async () => {
  await system.putApplication(tenant, { code: "APP-DAS", name: "Dossier" })
  const dir = mkdtempSync(join(tmpdir(), "das-blackbox-"))
  const file = join(dir, "das.json")
  const content = { context: "Ledger of the bank", decisions: [{ id: 1, choice: "PostgreSQL" }], "clé": "été" }
  writeFileSync(file, JSON.stringify(content))
  const das = await system.cliJson(["das", "submit", "--tenant", tenant.slug, "--application", "APP-DAS", "--title", "Target architecture", "--file", file])
  rmSync(dir, { recursive: true })
  expect(das).toMatchObject({ applicationCode: "APP-DAS", title: "Target architecture", content, status: "SUBMITTED" })
  expect(typeof das.submittedBy).toBe("string")

  const [event, ...more] = await eventsReceived(1, "events.referential.das.")
  expect(more).toEqual([])
  expect(event!.subject).toBe("events.referential.das.submitted")
  expect(event!.messageId).toBe(event!.body.id)
  expect(event!.body).toMatchObject({ type: "das.submitted", tenantId: tenant.id, data: das })
  expect(Object.keys(event!.body).sort()).toEqual(["createdAt", "data", "id", "tenantId", "type"])

  const unknown = await system.cli(["das", "submit", "--tenant", tenant.slug, "--application", "APP-NONE", "--title", "Lost"])
  expect(unknown.code).toBe(1)
  expect(JSON.parse(unknown.stderr)).toMatchObject({ status: 404, errorCode: "NOT_FOUND", detail: "Application 'APP-NONE' does not exist." })
}, 120_000)
