import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { consoleBrowser } from "../support/consoleBrowser.js"
import { startDiscoveryDocument } from "../support/discovery.js"
import { acceptThroughPage, magicLinkFor, memberThroughInvitation } from "../support/provisioning.js"
import { type Forgery, startOpenIdProvider, type StartedProvider, type TestUser } from "../support/OpenIdProvider.js"
import type { CreatedTenant } from "../support/system.js"
import { useSharedSystem } from "../support/useSystem.js"

/**
 * A tenant's single sign-on connection, set, shown and disabled by an operator with the compiled
 * CLI against the system as `npm start` runs it (plain-http issuers allowed on loopback), the
 * issuer's discovery document served on this machine.
 */
const system = useSharedSystem()

let provider: Awaited<ReturnType<typeof startDiscoveryDocument>> | undefined
let issuer = ""
let dir = ""
const secret = "sso-client-secret-blackbox-5f1d2c"

beforeAll(async () => {
  provider = await startDiscoveryDocument()
  issuer = provider.issuer
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

describe("signing in through the tenant's provider, a real OpenID Provider on this machine", () => {
  const slug = "bb-sso-flow"
  const password = "correct horse battery staple"
  const user = (sub: string, email: string, extra: Partial<TestUser> = {}): TestUser => ({ sub, email, emailVerified: true, password, ...extra })
  let op: StartedProvider
  let tenant: CreatedTenant

  beforeAll(async () => {
    op = await startOpenIdProvider({
      clients: [{ clientId: "portfolio-bb", clientSecret: "bb-client-secret-0123456789abcdef", redirectUris: [`${system.consoleUrl}/sso/${slug}/callback`] }],
      users: [
        user("idp-ana", `ana@${slug}.example`, { groups: ["everyone", "ea-team"] }),
        user("idp-bo", `bo@${slug}.example`),
        user("idp-ben", `ben@${slug}.example`, { emailVerified: false }),
        user("idp-eve", "eve@elsewhere.example"),
        user("idp-rex", `rex@${slug}.example`)
      ]
    })
    tenant = await system.createTenant(slug)
    await system.adminOk("provisioning", "PUT", `/admin/tenants/${slug}/sso`, {
      issuer: op.issuer,
      clientId: "portfolio-bb",
      clientSecret: "bb-client-secret-0123456789abcdef",
      domains: [`${slug}.example`],
      roleClaim: "groups",
      roleMap: [{ value: "ea-team", role: "architect" }]
    })
  })
  afterAll(() => op?.close())

  /** A browser's round trip: the console, the provider's login form, back to the console's callback. */
  const signInThroughConsole = async (login: string) => {
    const browser = consoleBrowser(system.consoleUrl)
    const begun = await browser.get(`/console/sso/${slug}`)
    expect(begun.status).toBe(302)
    const callback = new URL(await op.signIn(begun.location!, { login, password }))
    const back = await browser.get(`${callback.pathname}${callback.search}`)
    return { browser, back, callback }
  }
  const refusals = async () => {
    const entries: ReadonlyArray<{ action: string; detail: Record<string, unknown> }> = await system.cliJson(["audit", "--tenant", slug])
    return entries.filter((entry) => entry.action === "sso_sign_in_refused").map((entry) => String(entry.detail["reason"]))
  }
  const member = (email: string) => system.admin("provisioning", "GET", `/admin/tenants/${slug}/members/${encodeURIComponent(email)}`)

  it("makes a first sign-in an SSO_JIT member with the mapped role, signed in to the console; a second finds the same member", async () => {
    // Found by the work e-mail's domain, as by the workspace's name.
    const byEmail = await consoleBrowser(system.consoleUrl).get(`/console/sso?tenant=${encodeURIComponent(`Ana@${slug.toUpperCase()}.example`)}`)
    expect(byEmail.text).toContain(`<meta http-equiv="refresh" content="0; url=/console/sso/${slug}">`)
    expect((await consoleBrowser(system.consoleUrl).get(`/console/sso?tenant=${encodeURIComponent("ana@elsewhere.example")}`)).status).toBe(404)
    const first = await signInThroughConsole(`ana@${slug}.example`)
    expect(first.back.status).toBe(303)
    expect(first.back.location).toBe("/console/tokens")
    const home = await first.browser.get("/console/tokens")
    expect(home.status).toBe(200)
    expect(home.text).toContain(`ana@${slug}.example`)
    const ana = (await member(`ana@${slug}.example`)).body.member
    expect(ana).toMatchObject({ userEmail: `ana@${slug}.example`, arbRole: "architect", source: "SSO_JIT" })
    // No mapping: the default role. And the same member the second time.
    expect((await signInThroughConsole(`bo@${slug}.example`)).back.status).toBe(303)
    expect((await member(`bo@${slug}.example`)).body.member).toMatchObject({ arbRole: "viewer", source: "SSO_JIT" })
    expect((await signInThroughConsole(`ana@${slug}.example`)).back.status).toBe(303)
    expect((await member(`ana@${slug}.example`)).body.member).toEqual(ana)
    // The tenant's admin lists them as the public API does.
    const adminPat = await system.createPat(tenant, "read")
    const listed = await system.api(adminPat.token).get("/tenant/invitations/members")
    expect(listed.body.filter((m: { source: string }) => m.source === "SSO_JIT").map((m: { userEmail: string }) => m.userEmail).sort())
      .toEqual([`ana@${slug}.example`, `bo@${slug}.example`])
  })

  it("refuses, records why, and signs no one in: a replayed callback, an id token forged or of another issuer or nonce, an unverified e-mail, another domain", async () => {
    // The callback of a sign-in that succeeded, brought again with its state cookie: the state was taken.
    const done = await signInThroughConsole(`ana@${slug}.example`)
    const replay = consoleBrowser(system.consoleUrl)
    replay.jar.set("console_sso", done.callback.searchParams.get("state")!)
    expect((await replay.get(`${done.callback.pathname}${done.callback.search}`)).status).toBe(401)

    const forged: Array<[string, (genuine: Record<string, unknown>) => Forgery]> = [
      ["alg none", (claims) => ({ alg: "none", claims })],
      ["HS256 with the client secret", (claims) => ({ alg: "HS256", claims })],
      ["a key not in the provider's JWKS", (claims) => ({ alg: "RS256", key: "foreign", claims })],
      ["another issuer", (claims) => ({ alg: "RS256", key: "provider", claims: { ...claims, iss: "http://127.0.0.1:1/evil" } })],
      ["another nonce", (claims) => ({ alg: "RS256", key: "provider", claims: { ...claims, nonce: "not-the-one" } })],
      ["an e-mail made verified", (claims) => ({ alg: "RS256", key: "foreign", claims: { ...claims, email: `ben@${slug}.example` } })]
    ]
    for (const [what, forge] of forged) {
      op.rogue.forgeNextIdToken(forge)
      const { back, browser } = await signInThroughConsole(`bo@${slug}.example`)
      expect(back.status, what).toBe(401)
      expect(back.text, what).toContain("did not succeed")
      expect(browser.jar.has("console_session"), what).toBe(false)
    }
    expect((await signInThroughConsole(`ben@${slug}.example`)).back.status).toBe(401)
    expect((await signInThroughConsole("eve@elsewhere.example")).back.status).toBe(401)
    expect((await member(`ben@${slug}.example`)).status).toBe(404)
    expect((await member("eve@elsewhere.example")).status).toBe(404)

    const reasons = await refusals()
    expect(reasons.filter((reason) => reason === "the sign-in's state is unknown, was used already or expired")).toHaveLength(1)
    expect(reasons.filter((reason) => reason.startsWith("the provider's answer failed a check"))).toHaveLength(forged.length)
    expect(reasons).toContain(`the provider has not verified the e-mail ben@${slug}.example (claim email_verified)`)
    expect(reasons).toContain("the e-mail's domain elsewhere.example is not one the connection allows")
  })

  it("required: refuses a member's password but a break-glass admin's, and links the member's account by the verified e-mail", async () => {
    const required = "bb-sso-req"
    const chief = await system.createTenant(required)
    await acceptThroughPage(await magicLinkFor(system, chief.adminEmail), password)
    const pia = `pia@${required}.example`
    await memberThroughInvitation(system, await system.createPat(chief, "write"), pia, "contributor")
    const invited = (await system.admin("provisioning", "GET", `/admin/tenants/${required}/members/${encodeURIComponent(pia)}`)).body.member
    op.addClient({ clientId: "portfolio-req", clientSecret: "bb-req-secret-0123456789abcdef0123", redirectUris: [`${system.consoleUrl}/sso/${required}/callback`] })
    op.setUser(user("idp-pia", pia))
    await system.adminOk("provisioning", "PUT", `/admin/tenants/${required}/sso`, {
      issuer: op.issuer,
      clientId: "portfolio-req",
      clientSecret: "bb-req-secret-0123456789abcdef0123",
      domains: [`${required}.example`],
      required: true,
      breakGlass: [chief.adminEmail]
    })
    const refused = await consoleBrowser(system.consoleUrl).signIn(pia, password)
    expect(refused.status).toBe(403)
    expect(refused.text).toContain(`Your workspace ${required} signs you in through your company`)
    expect((await consoleBrowser(system.consoleUrl).signIn(chief.adminEmail, password)).status).toBe(303)

    const browser = consoleBrowser(system.consoleUrl)
    const begun = await browser.get(`/console/sso/${required}`)
    const callback = new URL(await op.signIn(begun.location!, { login: pia, password }))
    expect((await browser.get(`${callback.pathname}${callback.search}`)).location).toBe("/console/tokens")
    expect((await browser.get("/console/tokens")).text).toContain(`${pia} (contributor)`)
    // Her account, found by the e-mail the provider verified: the member she was, not a new one.
    expect((await system.admin("provisioning", "GET", `/admin/tenants/${required}/members/${encodeURIComponent(pia)}`)).body.member).toEqual(invited)
  })

  it("reads the e-mail's verification from the claim the connection names, as Microsoft Entra ID's xms_edov", async () => {
    const connection = {
      issuer: op.issuer,
      clientId: "portfolio-bb",
      clientSecret: "bb-client-secret-0123456789abcdef",
      domains: [`${slug}.example`],
      roleClaim: "groups",
      roleMap: [{ value: "ea-team", role: "architect" }]
    }
    await system.adminOk("provisioning", "PUT", `/admin/tenants/${slug}/sso`, { ...connection, emailVerifiedClaim: "xms_edov" })
    const entra = (edov: unknown) => (genuine: Record<string, unknown>): Forgery => {
      const { email_verified: _, ...claims } = genuine
      return { alg: "RS256", key: "provider", claims: edov === undefined ? claims : { ...claims, xms_edov: edov } }
    }
    op.rogue.forgeNextIdToken(entra(true))
    expect((await signInThroughConsole(`bo@${slug}.example`)).back.status).toBe(303)
    op.rogue.forgeNextIdToken(entra(undefined))
    expect((await signInThroughConsole(`bo@${slug}.example`)).back.status).toBe(401)
    // The standard claim no longer counts for this connection.
    expect((await signInThroughConsole(`bo@${slug}.example`)).back.status).toBe(401)
    expect(await refusals()).toContain(`the provider has not verified the e-mail bo@${slug}.example (claim xms_edov)`)
    await system.adminOk("provisioning", "PUT", `/admin/tenants/${slug}/sso`, connection)
  })

  it("refuses a removed member, signs in after the provider rotated its keys, and offers nothing once the connection is disabled", async () => {
    expect((await signInThroughConsole(`rex@${slug}.example`)).back.status).toBe(303)
    const rex = (await member(`rex@${slug}.example`)).body.member
    const adminPat = await system.createPat(tenant, "write")
    expect((await system.api(adminPat.token).del(`/tenant/invitations/members/${encodeURIComponent(rex.userSub)}`)).status).toBe(204)
    const removed = await signInThroughConsole(`rex@${slug}.example`)
    expect(removed.back.status).toBe(403)
    expect((await member(`rex@${slug}.example`)).status).toBe(404)

    await op.rotateKeys()
    expect((await signInThroughConsole(`bo@${slug}.example`)).back.status).toBe(303)

    await system.adminOk("provisioning", "DELETE", `/admin/tenants/${slug}/sso`)
    expect((await consoleBrowser(system.consoleUrl).get(`/console/sso/${slug}`)).status).toBe(404)
  })
})
