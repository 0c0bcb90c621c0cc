import { randomBytes } from "node:crypto"
import { describe, expect, it } from "vitest"
import { send } from "../support/http.js"
import { checksumAlphabet, forgeToken } from "../support/pat.js"
import { acceptThroughPage, inviteOk, magicLinkFor } from "../support/provisioning.js"
import { useSystem } from "../support/useSystem.js"

/**
 * docs/product-rules.md#authentication: a PAT is never logged; logs show its first 10 characters. Nor may a password, the
 * internal secret, a partner's client secret or access token, or a signed assertion end up there. Every service runs at Debug here, so that the
 * most talkative level is the one checked.
 */
const system = useSystem({ LOG_LEVEL: "Debug" })

describe("what the services write to their logs", () => {
  it("never holds a token, a password, the internal secret or an internal assertion, at any level", async () => {
    const tenant = await system.createTenant("bb-logs")
    const writer = await system.createPat(tenant, "write")
    const reader = await system.createPat(tenant, "read")
    const password = `pw-${randomBytes(12).toString("hex")}`

    expect((await system.api(reader.token).get("/referentiel/applications")).status).toBe(200)
    expect((await system.api(reader.token).post("/tenant/invitations", { body: { email: "x@bb-logs.example", arbRole: "viewer" } })).status).toBe(403)
    const forged = forgeToken(checksumAlphabet([writer.token, reader.token])!)
    expect((await system.api(forged).get("/referentiel/applications")).status).toBe(401)
    await inviteOk(system, writer, "logged@bb-logs.example", "viewer")
    await acceptThroughPage(await magicLinkFor(system, "logged@bb-logs.example"), password)
    const partner = await system.cliJson(["partner", "create", "--tenant", tenant.slug, "--name", "bb-logs-erp", "--scope", "read"])
    const issued = await send(`${system.baseUrl}/oauth/token`, {
      method: "POST",
      body: `grant_type=client_credentials&client_id=${partner.client_id}&client_secret=${partner.client_secret}`,
      headers: { "content-type": "application/x-www-form-urlencoded" }
    })
    const accessToken = JSON.parse(issued.text).access_token as string
    expect((await system.api(accessToken).get("/referentiel/applications")).status).toBe(200)
    await system.cli(["pat", "revoke", writer.token])
    expect((await system.api(writer.token).get("/referentiel/applications")).status).toBe(401)

    // The services did log, among others the revocation under the token's prefix only.
    const logs = system.logs.join("\n")
    expect(system.logs.length).toBeGreaterThan(10)
    expect(logs).toContain(writer.token.slice(0, 10))

    const secrets = {
      writeToken: writer.token,
      readToken: reader.token,
      forgedToken: forged,
      password,
      internalSecret: system.secret,
      partnerSecret: partner.client_secret,
      // Its signature: the header and claims alone are no secret, the whole token is.
      partnerAccessToken: accessToken.split(".")[2]!
    }
    const found = Object.entries(secrets).filter(([, secret]) => logs.includes(secret)).map(([name]) => name)
    expect(found).toEqual([])
    // The random part of a token, whatever surrounds it.
    for (const token of [writer.token, reader.token, forged]) expect(logs).not.toContain(token.slice(7, 37))
    expect(logs).not.toMatch(/x-portfolio-assertion/i)
  })

  it("keeps answers free of them too: a failed call names no token", async () => {
    const forged = `ap_pat_${randomBytes(27).toString("base64url").slice(0, 36)}`
    const reply = await send(`${system.baseUrl}/referentiel/applications`, { token: forged })
    expect(reply.status).toBe(401)
    expect(reply.text).not.toContain(forged.slice(7))
  })
})
