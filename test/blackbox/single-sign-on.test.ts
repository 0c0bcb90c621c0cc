import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { useSystem } from "../support/useSystem.js"

/**
 * A tenant's single sign-on connection, set, shown and disabled by an operator with the compiled
 * CLI against the system as `npm start` runs it (plain-http issuers allowed on loopback), the
 * issuer's discovery document served on this machine.
 */
const system = useSystem()

let provider: Server
let issuer = ""
let dir = ""
const secret = "sso-client-secret-blackbox-5f1d2c"

beforeAll(async () => {
  provider = createServer((request, response) => {
    if (request.url !== "/.well-known/openid-configuration") return void response.writeHead(404).end()
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({
      issuer,
      authorization_endpoint: `${issuer}/auth`,
      token_endpoint: `${issuer}/token`,
      jwks_uri: `${issuer}/jwks`,
      response_types_supported: ["code"],
      id_token_signing_alg_values_supported: ["ES256", "RS256"]
    }))
  })
  await new Promise<void>((resolve) => provider.listen(0, "127.0.0.1", resolve))
  issuer = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`
  dir = mkdtempSync(join(tmpdir(), "bb-sso-"))
  writeFileSync(join(dir, "secret"), `${secret}\n`)
})

afterAll(() => {
  provider?.close()
  if (dir !== "") rmSync(dir, { recursive: true, force: true })
})

describe("portfolio sso, against the running system", () => {
  it("sets a connection after reading its issuer, shows its redirect URI, never the secret, and disables it", async () => {
    const tenant = await system.createTenant("bb-sso")
    const set = await system.cliJson([
      "sso", "set", "--tenant", tenant.slug, "--issuer", issuer, "--client-id", "portfolio",
      "--client-secret-file", join(dir, "secret"), "--domains", "bb-sso.example,acme.example",
      "--role-claim", "groups", "--role-map", "ea-team=architect,admins=tenant-admin", "--required",
      "--break-glass", tenant.adminEmail
    ])
    expect(set).toMatchObject({
      tenantId: tenant.id,
      issuer,
      clientId: "portfolio",
      redirectUri: `${system.consoleUrl}/sso/${tenant.slug}/callback`,
      domains: ["bb-sso.example", "acme.example"],
      defaultRole: "viewer",
      roleClaim: "groups",
      roleMap: [{ value: "ea-team", role: "architect" }, { value: "admins", role: "tenant-admin" }],
      required: true,
      breakGlass: [tenant.adminEmail]
    })
    const shown = await system.cli(["sso", "show", "--tenant", tenant.slug])
    expect(shown.code).toBe(0)
    expect(shown.stdout).toContain(`${system.consoleUrl}/sso/${tenant.slug}/callback`)
    expect(shown.stdout).toMatch(/client secret: set \S+, never shown/)

    // An issuer that is not https and not on loopback changes nothing.
    const refused = await system.cli([
      "sso", "set", "--tenant", tenant.slug, "--issuer", "http://idp.bb-sso.example", "--client-id", "other",
      "--client-secret-file", join(dir, "secret"), "--domains", "bb-sso.example"
    ])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain("The issuer must be https (plain http only on a loopback address).")
    expect(await system.cliJson(["sso", "show", "--tenant", tenant.slug])).toEqual(set)

    expect(await system.cliJson(["sso", "disable", "--tenant", tenant.slug])).toEqual({ tenant: tenant.slug, disabled: true })
    const gone = await system.cli(["sso", "show", "--tenant", tenant.slug])
    expect(gone.code).toBe(1)
    expect(gone.stderr).toContain(`The tenant '${tenant.slug}' has no single sign-on connection.`)
    expect(system.logs.join("\n")).not.toContain(secret)
  })
})
