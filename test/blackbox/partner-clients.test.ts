import { beforeAll, describe, expect, it } from "vitest"
import { send } from "../support/http.js"
import type { CreatedTenant } from "../support/system.js"
import { useSharedSystem } from "../support/useSystem.js"

const system = useSharedSystem()

let tenant: CreatedTenant
let client: { client_id: string; client_secret: string }

const form = "application/x-www-form-urlencoded"
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}`

const requestToken = (id: string, secret: string, body = "grant_type=client_credentials") =>
  send(`${system.baseUrl}/oauth/token`, { method: "POST", body, headers: { authorization: basic(id, secret), "content-type": form } })

const headerOf = (token: string) => JSON.parse(Buffer.from(token.split(".")[0]!, "base64url").toString())

beforeAll(async () => {
  tenant = await system.createTenant("bb-partners")
  await system.putApplication(tenant, { code: "APP-P", name: "Seen by the partner", status: "ACTIVE" })
  client = await system.cliJson(["partner", "create", "--tenant", tenant.slug, "--name", "bb-erp", "--scope", "read"])
}, 60_000)

describe("partner clients, end to end (CLI, token endpoint, gateway, referential)", () => {
  it("creates service-partner-<name>-<suffix> with a secret, then a 5-minute token that reads the tenant's referential at 600 a minute", async () => {
    expect(client).toMatchObject({ tenant: "bb-partners", tenantId: tenant.id, scope: "read", state: "enabled" })
    expect(client.client_id).toMatch(/^service-partner-bb-erp-[0-9a-z]{8}$/)
    const issued = await requestToken(client.client_id, client.client_secret)
    expect(issued.status).toBe(200)
    expect(issued.headers.get("cache-control")).toBe("no-store")
    const body = JSON.parse(issued.text)
    expect(body).toMatchObject({ token_type: "Bearer", expires_in: 300, scope: "read" })

    const keys = JSON.parse((await send(`${system.baseUrl}/.well-known/jwks.json`)).text).keys
    expect(keys.map((k: { kid: string }) => k.kid)).toContain(headerOf(body.access_token).kid)
    expect(JSON.stringify(keys)).not.toContain("\"d\"")

    const apps = await send(`${system.baseUrl}/referentiel/applications`, { headers: { authorization: `Bearer ${body.access_token}` } })
    expect(apps.status).toBe(200)
    expect(JSON.parse(apps.text).map((a: { code: string }) => a.code)).toEqual(["APP-P"])
    expect(apps.headers.get("x-ratelimit-limit")).toBe("600")
  })

  it("refuses the provisioning endpoints to a partner token (403) and a forged token (401)", async () => {
    const writer = await system.cliJson(["partner", "create", "--tenant", tenant.slug, "--name", "bb-writer", "--scope", "write"])
    const token = JSON.parse((await requestToken(writer.client_id, writer.client_secret)).text).access_token as string
    const invitations = await send(`${system.baseUrl}/tenant/invitations`, { headers: { authorization: `Bearer ${token}` } })
    expect(invitations.status).toBe(403)
    expect(JSON.parse(invitations.text).errorCode).toBe("INSUFFICIENT_SCOPE")
    const [header, payload] = token.split(".")
    const forged = await send(`${system.baseUrl}/referentiel/applications`, { headers: { authorization: `Bearer ${header}.${payload}.` } })
    expect(forged.status).toBe(401)
  })

  it("lists, rotates with and without a grace, disables and enables through the CLI, as the token endpoint then tells", async () => {
    const listed = await system.cliJson(["partner", "list", "--tenant", tenant.slug])
    expect(listed.map((c: { clientId: string }) => c.clientId)).toEqual(expect.arrayContaining([client.client_id]))
    const rotated = await system.cliJson(["partner", "rotate-secret", client.client_id, "--grace", "1h"])
    expect((await requestToken(client.client_id, client.client_secret)).status).toBe(200)
    const again = await system.cliJson(["partner", "rotate-secret", client.client_id, "--grace", "0"])
    expect((await requestToken(client.client_id, rotated.client_secret)).status).toBe(401)
    expect((await requestToken(client.client_id, again.client_secret)).status).toBe(200)
    await system.cliJson(["partner", "disable", client.client_id])
    const refused = await requestToken(client.client_id, again.client_secret)
    expect({ status: refused.status, error: JSON.parse(refused.text).error, challenge: refused.headers.get("www-authenticate") }).toEqual({
      status: 401,
      error: "invalid_client",
      challenge: "Basic realm=\"partners\", charset=\"UTF-8\""
    })
    await system.cliJson(["partner", "enable", client.client_id])
    expect((await requestToken(client.client_id, again.client_secret)).status).toBe(200)
  })

  it("keeps each tenant's names its own: the same name elsewhere is another client, a name taken here is a 409 naming nobody else", async () => {
    const other = await system.createTenant("bb-partners-other")
    const elsewhere = await system.cliJson(["partner", "create", "--tenant", other.slug, "--name", "bb-erp", "--scope", "write"])
    expect(elsewhere.client_id).toMatch(/^service-partner-bb-erp-[0-9a-z]{8}$/)
    expect(elsewhere.client_id).not.toBe(client.client_id)
    const itsToken = JSON.parse((await requestToken(elsewhere.client_id, elsewhere.client_secret)).text).access_token as string
    const itsApps = await send(`${system.baseUrl}/referentiel/applications`, { headers: { authorization: `Bearer ${itsToken}` } })
    expect(JSON.parse(itsApps.text)).toEqual([])
    expect((await system.cliJson(["partner", "list", "--tenant", other.slug])).map((c: { clientId: string }) => c.clientId)).toEqual([elsewhere.client_id])

    const taken = await system.cli(["partner", "create", "--tenant", other.slug, "--name", "bb-erp", "--scope", "read", "--json"])
    expect(taken.code).toBe(1)
    const problem = JSON.parse(taken.stderr)
    expect(problem).toMatchObject({ status: 409, errorCode: "CONFLICT", detail: "This tenant has a partner client named 'bb-erp' already; choose another name." })
    expect(taken.stderr).not.toContain(client.client_id)
  })

  it("answers an id no client can have (a NUL, 300 characters) as an unknown client, by Basic or in the body, with no ERROR logged", async () => {
    const mark = system.logMark
    for (const id of ["x\u0000", "\u0000", "a".repeat(300), `${client.client_id}\u0000`]) {
      const inBody = await send(`${system.baseUrl}/oauth/token`, {
        method: "POST",
        body: `grant_type=client_credentials&client_id=${encodeURIComponent(id)}&client_secret=ap_cs_wrong`,
        headers: { "content-type": form }
      })
      const byBasic = await requestToken(encodeURIComponent(id), "ap_cs_wrong")
      // As for any unknown client (docs/product-rules.md#partner-clients): 400 in the body, 401 with a challenge by Basic.
      expect([inBody, byBasic].map((answer) => ({ status: answer.status, error: JSON.parse(answer.text).error, challenge: answer.headers.get("www-authenticate") })), id)
        .toEqual([
          { status: 400, error: "invalid_client", challenge: null },
          { status: 401, error: "invalid_client", challenge: "Basic realm=\"partners\", charset=\"UTF-8\"" }
        ])
    }
    const errors = system.logsSince(mark).filter((line) => line.startsWith("gateway | ") && /"logLevel":"ERROR"/i.test(line))
    expect(errors).toEqual([])
  })
})
