import { afterAll, beforeAll, expect, it } from "vitest"
import type { CreatedTenant } from "../support/system.js"
import { useSharedSystem } from "../support/useSystem.js"
import { expectedSignature, WebhookReceiver } from "../support/webhookReceiver.js"

const system = useSharedSystem()
const receiver = new WebhookReceiver()
let tenant: CreatedTenant

beforeAll(async () => {
  await receiver.start()
  tenant = await system.createTenant("hooks-cli")
}, 120_000)

afterAll(() => receiver.stop())

it("manages a subscription and its deliveries with `portfolio webhook`, every command in JSON", async () => {
  const created = await system.cliJson(["webhook", "create", "--tenant", tenant.slug, "--url", receiver.url("/cli"), "--events", "das.submitted", "--description", "ARB feed"])
  expect(created).toMatchObject({ url: receiver.url("/cli"), events: ["das.submitted"], state: "enabled", consecutiveFailures: 0, description: "ARB feed" })
  expect(created.secret).toMatch(/^whsec_/)
  const listed = await system.cliJson(["webhook", "list", "--tenant", tenant.slug])
  expect(listed.map((s: any) => s.id)).toEqual([created.id])
  expect(listed[0]).not.toHaveProperty("secret")

  await system.putApplication(tenant, { code: "CLI-HOOK", name: "Via CLI", criticality: "IMPORTANT" })
  await system.cliJson(["das", "submit", "--tenant", tenant.slug, "--application", "CLI-HOOK", "--title", "Dossier"])
  const [first] = await receiver.waitFor("/cli", 1)
  expect(first!.headers["x-service-event"]).toBe("das.submitted")
  expect(first!.headers["x-service-signature"]).toBe(expectedSignature(created.secret, first!.headers["x-service-timestamp"] as string, first!.body))

  const [delivery] = await system.cliJson(["webhook", "deliveries", created.id, "--status", "succeeded", "--limit", "10"])
  expect(delivery).toMatchObject({ status: "succeeded", attempts: 1, eventType: "das.submitted" })
  const attempts = await system.cliJson(["webhook", "attempts", delivery.id])
  expect(attempts).toEqual([expect.objectContaining({ attempt: 1, statusCode: 200, id: first!.headers["x-service-delivery-id"] })])

  await system.cliJson(["webhook", "redeliver", delivery.id])
  const [, again] = await receiver.waitFor("/cli", 2)
  expect(again!.headers["x-service-event-id"]).toBe(first!.headers["x-service-event-id"])

  const rotated = await system.cliJson(["webhook", "rotate-secret", created.id, "--grace", "1h"])
  expect(rotated.secret).toMatch(/^whsec_/)
  expect(rotated.secret).not.toBe(created.secret)
  const updated = await system.cliJson(["webhook", "update", created.id, "--events", "application.created,das.submitted"])
  expect(updated.events).toEqual(["application.created", "das.submitted"])
  expect(await system.cliJson(["webhook", "disable", created.id])).toMatchObject({ state: "disabled", disabledReason: "manual" })
  const refused = await system.cli(["webhook", "recover", created.id, "--since", "2026-01-01T00:00:00Z", "--json"])
  expect(refused.code).not.toBe(0)
  expect(await system.cliJson(["webhook", "enable", created.id])).toMatchObject({ state: "enabled" })
  expect(await system.cliJson(["webhook", "recover", created.id, "--since", "2026-01-01T00:00:00Z"])).toEqual({ redelivered: 0 })
  expect(await system.cliJson(["webhook", "show", created.id])).toMatchObject({ id: created.id, state: "enabled" })
  await system.cliJson(["webhook", "delete", created.id])
  const gone = await system.cli(["webhook", "show", created.id, "--json"])
  expect(gone.code).not.toBe(0)
  expect(gone.stderr + gone.stdout).toMatch(/does not exist/)
})
