import { lookup } from "node:dns/promises"
import { hostname } from "node:os"
import { beforeAll, expect, it } from "vitest"
import type { CreatedTenant } from "../support/system.js"
import { useSystem } from "../support/useSystem.js"

/**
 * A deployment that refuses private targets, as production does (WEBHOOK_ALLOW_PRIVATE_TARGETS
 * unset): a subscription to a name that resolves to a private address is accepted (names are judged
 * at each connection), and its attempts tell the tenant that the address is not public, never what
 * the name resolves to; the operator's log keeps the address (docs/product-rules.md#webhooks).
 */
const system = useSystem({ WEBHOOK_ALLOW_PRIVATE_TARGETS: "false" })
let tenant: CreatedTenant
// The machine's own name, which its hosts file maps to a loopback address: a name no public
// receiver could have, and one that resolves without asking any other host.
const name = hostname()
let address: string

beforeAll(async () => {
  address = (await lookup(name)).address
  tenant = await system.createTenant("bb-private-target")
}, 120_000)

it("tells the tenant 'refused: the address is not public' and keeps the address for the operator's log", async () => {
  expect(address, `${name} must resolve to a loopback or private address on this machine`).toMatch(/^(127\.|10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.|::1$)/)
  const created = await system.cliJson(["webhook", "create", "--tenant", tenant.slug, "--url", `https://${name}:9/hook`, "--events", "application.created"])
  await system.putApplication(tenant, { code: "PRIV-1", name: "Aimed inside", status: "ACTIVE" })
  let attempts: Array<{ error: string | null; statusCode: number | null }> = []
  for (let tries = 0; tries < 150 && attempts.length === 0; tries++) {
    const [delivery] = await system.cliJson(["webhook", "deliveries", created.id, "--limit", "1"])
    if (delivery !== undefined && delivery.attempts > 0) attempts = await system.cliJson(["webhook", "attempts", delivery.id])
    else await new Promise((resolve) => setTimeout(resolve, 100))
  }
  expect(attempts[0]).toMatchObject({ statusCode: null, error: "refused: the address is not public" })
  const human = await system.cli(["webhook", "attempts", (await system.cliJson(["webhook", "deliveries", created.id, "--limit", "1"]))[0].id])
  expect(human.stdout).toContain("refused: the address is not public")
  expect(human.stdout).not.toContain(address)
  const logged = system.logs.filter((line) =>
    line.startsWith("webhook-dispatcher | ") && line.includes("webhook target refused by the address policy") && line.includes(`refused target ${address}`))
  expect(logged.length).toBeGreaterThan(0)
})
