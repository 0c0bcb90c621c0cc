import { afterAll, beforeAll, expect, it } from "vitest"
import type { CreatedTenant } from "../support/system.js"
import { useSharedSystem } from "../support/useSystem.js"
import { WebhookReceiver } from "../support/webhookReceiver.js"

/**
 * What reaches an operator's terminal from text others wrote (docs/security.md, "Control
 * characters"): a receiver's answer is printed escaped by `portfolio webhook attempts`, exact in
 * `--json`; a description with control characters is refused before it is stored.
 */
const system = useSharedSystem()
const receiver = new WebhookReceiver()
let tenant: CreatedTenant
/** Deleted at the end: the system is shared, and a subscription answered 500 would be retried into the next files. */
let subscriptionId: string | undefined

// Sets the window title, erases the line, moves up, and turns the text red, as the test found.
const hostile = "\u001b]0;pwned\u0007\r\u001b[2K\u001b[1A\u001b[31mattacker\u001b[0m \u202Eevil"

/** C0 but tab and line feed, DEL and C1, and the bidirectional embeddings, overrides and isolates. */
const actedOn = (c: string) => {
  const code = c.codePointAt(0)!
  return (code < 0x20 && c !== "\t" && c !== "\n") || (code >= 0x7f && code <= 0x9f) || (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069)
}

beforeAll(async () => {
  await receiver.start()
  receiver.answer = (path) => (path === "/hostile" ? { status: 500, headers: { "content-type": "text/plain" }, body: hostile } : { status: 200 })
  tenant = await system.createTenant("bb-terminal")
}, 120_000)

afterAll(async () => {
  if (subscriptionId !== undefined) await system.adminOk("webhook-dispatcher", "DELETE", `/admin/webhooks/${subscriptionId}`)
  await receiver.stop()
})

it("prints a receiver's answer with its control and bidirectional characters escaped, and keeps them exact in --json", async () => {
  const created = await system.cliJson(["webhook", "create", "--tenant", tenant.slug, "--url", receiver.url("/hostile"), "--events", "application.created"])
  subscriptionId = created.id
  await system.putApplication(tenant, { code: "TERM-1", name: "Hostile answer", status: "ACTIVE" })
  await receiver.waitFor("/hostile", 1)
  let delivery: { id: string; attempts: number } | undefined
  for (let tries = 0; tries < 100 && (delivery === undefined || delivery.attempts < 1); tries++) {
    ;[delivery] = await system.cliJson(["webhook", "deliveries", created.id, "--limit", "1"])
    if (delivery === undefined || delivery.attempts < 1) await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const human = await system.cli(["webhook", "attempts", delivery!.id])
  expect(human.code).toBe(0)
  expect(human.stdout).toContain("500")
  expect(human.stdout).toContain("attacker")
  // Nothing a terminal would act on: no ESC, BEL or CR, no right-to-left override.
  expect([...human.stdout].filter(actedOn).map((c) => c.codePointAt(0)!.toString(16))).toEqual([])
  const json = await system.cliJson(["webhook", "attempts", delivery!.id])
  expect(json[0].responseBody).toBe(hostile)
})

it("refuses a description with control characters, storing nothing", async () => {
  const refused = await system.cli(["webhook", "create", "--tenant", tenant.slug, "--url", receiver.url("/other"), "--events", "application.created", "--description", "ARB\u001b[2Kfeed", "--json"])
  expect(refused.code).not.toBe(0)
  expect(refused.stdout).toBe("")
  const listed = await system.cliJson(["webhook", "list", "--tenant", tenant.slug])
  expect(listed.map((s: { url: string }) => s.url)).not.toContain(receiver.url("/other"))
})
