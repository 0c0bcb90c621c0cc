import { createDatabase, freePort, type FreshDatabase } from "@portfolio/platform/testing"
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cliJson, repoRoot, runCli } from "../support/cli.js"
import { ctrlC, type Started, StartWithinMs, startNpm, waitFor } from "../support/npmStart.js"
import { startOpenIdProvider, type StartedProvider, type TestUser } from "../support/OpenIdProvider.js"
import { expectedSignature, WebhookReceiver } from "../support/webhookReceiver.js"

/**
 * The console in Debian's headless chromium, through `npm start` as a person runs it (on the
 * compiled services): the demo
 * admin sets a password from the welcome mail and signs in, invites a developer who requests a
 * token, approves it, and so on. Every page visited is saved as a screenshot under
 * `.artifacts/console/` (CI keeps the folder).
 */
const screenshots = join(repoRoot, ".artifacts", "console")
const password = "correct horse battery staple console"
const justification = "The nightly CI job of billing reads the applications it deploys."

let database: FreshDatabase
let dataDir: string
let running: Started | undefined
let browser: Browser
let consoleUrl = ""
let apiUrl = ""
let shot = 0
const receiver = new WebhookReceiver()
const contexts: Record<"admin" | "developer" | "other", BrowserContext | undefined> = { admin: undefined, developer: undefined, other: undefined }
const state: { token?: string; requestId?: string; subscriptionId?: string; secret?: string } = {}

const cli = (args: ReadonlyArray<string>, input?: string) => cliJson(args, { env: { DATA_DIR: dataDir }, ...(input === undefined ? {} : { input }) })

/** The link of the latest mail kept for `to` (MAIL_TRANSPORT=local), as the person would click it. */
const linkMailedTo = async (to: string) => {
  const mail: Array<{ readonly text: string }> = await cli(["mail", "list", "--to", to])
  const link = /https?:\/\/\S+\/accept\/[A-Za-z0-9_-]{43}/.exec(mail[0]?.text ?? "")?.[0]
  if (link === undefined) throw new Error(`no link mailed to ${to}: ${JSON.stringify(mail)}`)
  return link
}

/**
 * The whole page, but for a page as tall as the API reference, whose full-page shot took more than
 * Playwright's 30 s under the CI's load (chromium renders without a GPU here): its first screen.
 */
const snap = async (page: Page, name: string, fullPage = true) => {
  shot++
  await page.screenshot({ path: join(screenshots, `${String(shot).padStart(2, "0")}-${name}.png`), fullPage })
}

/**
 * Every context waits up to 90 s for an action instead of Playwright's 30: the CI runs this file
 * beside three others that start whole systems, on two cores, and chromium is then slow to paint.
 * A page that never comes still fails, through the test's own bound.
 */
const newContext = async () => {
  const context = await browser.newContext()
  context.setDefaultTimeout(90_000)
  return context
}

const pageOf = async (who: keyof typeof contexts) => {
  contexts[who] ??= await newContext()
  const pages = contexts[who]!.pages()
  return pages[0] ?? (await contexts[who]!.newPage())
}

/** Follows a magic link and chooses the password on provisioning's page. */
const setPassword = async (page: Page, link: string, name: string) => {
  await page.goto(link)
  await page.fill("#password", password)
  await page.fill("#confirm", password)
  await snap(page, `${name}-accept`)
  await page.click("button[type=submit]")
  await expect.poll(() => page.textContent("h1"), { timeout: 60_000 }).toBe("You are in")
}

const signIn = async (page: Page, email: string, name: string) => {
  await page.goto(`${consoleUrl}/sign-in`)
  await page.fill("#email", email)
  await page.fill("#password", password)
  await snap(page, `${name}-sign-in`)
  await Promise.all([page.waitForURL(/\/console\/tokens$/), page.click("button[type=submit]")])
}

/** Submits a form by clicking `selector`, and waits for the page its POST answered. */
const submit = async (page: Page, selector: string) => {
  const [answer] = await Promise.all([page.waitForResponse((r) => r.request().method() === "POST"), page.click(selector)])
  await page.waitForLoadState()
  return answer
}

const api = (path: string, token: string) => fetch(`${apiUrl}${path}`, { headers: { authorization: `Bearer ${token}` } })

beforeAll(async () => {
  await rm(screenshots, { recursive: true, force: true })
  await mkdir(screenshots, { recursive: true })
  database = await createDatabase("browser")
  dataDir = await mkdtemp(join(tmpdir(), "portfolio-browser-"))
  const names = ["PORT", "ADMIN_PORT", "REFERENTIAL_PORT", "REFERENTIAL_ADMIN_PORT", "PROVISIONING_PORT", "PROVISIONING_ADMIN_PORT", "WEBHOOK_ADMIN_PORT", "CONSOLE_PORT", "CONSOLE_ADMIN_PORT"]
  const ports = await Promise.all(names.map(() => freePort()))
  // The compiled services (`npm start -- --compiled`, what the image runs): the sources' own start
  // is npm-start.test.ts's, and five more processes compiling TypeScript at once only load the machine.
  running = startNpm({ DATABASE_URL: database.url, DATA_DIR: dataDir, ...Object.fromEntries(names.map((n, i) => [n, String(ports[i])])) }, ["--compiled"])
  await waitFor(running, /Ctrl-C stops everything/, "that it is ready")
  consoleUrl = (await waitFor(running, /console: +(http\S+\/console)/, "the console's URL"))[1]!
  apiUrl = (await waitFor(running, /public API: +(http\S+)/, "the public API's URL"))[1]!
  await receiver.start()
  browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"] })
}, StartWithinMs + 60_000)

afterAll(async () => {
  await browser?.close()
  await receiver.stop()
  if (running !== undefined) await ctrlC(running)
  await rm(dataDir, { recursive: true, force: true })
  await database?.drop()
}, 60_000)

describe("the console in a browser, through npm start", () => {
  it("lets the demo admin set a password from the welcome mail, sign in, and invite a developer who joins", async () => {
    const admin = await pageOf("admin")
    await setPassword(admin, await linkMailedTo("admin@demo.example"), "admin")
    await signIn(admin, "admin@demo.example", "admin")
    await snap(admin, "admin-tokens")
    await admin.goto(`${consoleUrl}/admin/members`)
    await admin.fill("#email", "dev@demo.example")
    await admin.selectOption("#arbRole", "architect")
    await Promise.all([admin.waitForURL(/notice=invited/), admin.click("form[action$='/invite'] button[type=submit]")])
    expect(await admin.textContent("main")).toContain("dev@demo.example")
    await snap(admin, "admin-members")

    const developer = await pageOf("developer")
    await setPassword(developer, await linkMailedTo("dev@demo.example"), "developer")
    await signIn(developer, "dev@demo.example", "developer")
  }, 180_000)

  it("lets the developer request a token, the admin approve it and see it once; the token works on the API", async () => {
    const developer = await pageOf("developer")
    await developer.goto(`${consoleUrl}/tokens/new`)
    await developer.selectOption("#scope", "write")
    await developer.fill("#days", "30")
    await developer.fill("#justification", justification)
    await snap(developer, "developer-request")
    await Promise.all([developer.waitForURL(/notice=requested/), developer.click("main button[type=submit]")])
    expect(await developer.textContent("main")).toContain("pending")

    const admin = await pageOf("admin")
    await admin.goto(`${consoleUrl}/admin/requests`)
    const section = admin.locator("section.request", { hasText: "dev@demo.example" })
    state.requestId = (await section.getAttribute("data-request"))!
    expect(await section.textContent()).toContain(justification)
    await snap(admin, "admin-requests")
    await Promise.all([admin.waitForURL(/\/approve$/), section.locator("button", { hasText: "Approve" }).click()])
    state.token = await admin.inputValue("#token")
    expect(state.token).toMatch(/^ap_pat_/)
    expect(await admin.textContent("main")).toContain("This token is shown once, now.")
    expect(await admin.isVisible("button[data-copy=token]")).toBe(true)
    await snap(admin, "admin-approved")
    // Shown once: the requests page does not show it again.
    await admin.goto(`${consoleUrl}/admin/requests`)
    expect(await admin.content()).not.toContain(state.token)

    expect((await api("/referentiel/applications", state.token)).status).toBe(200)
    await developer.goto(`${consoleUrl}/tokens`)
    expect(await developer.textContent("main")).toContain(state.token.slice(0, 10))
    expect(await developer.textContent("main")).toContain("approved by admin@demo.example")
    await snap(developer, "developer-tokens")
  }, 180_000)

  it("lets the developer revoke the token, which then gets 401", async () => {
    const developer = await pageOf("developer")
    await developer.goto(`${consoleUrl}/tokens`)
    await Promise.all([developer.waitForURL(/notice=revoked/), developer.click("form[action$='/revoke'] button")])
    expect(await developer.textContent("main")).toContain("You have no active token.")
    await snap(developer, "developer-revoked")
    await expect.poll(async () => (await api("/referentiel/applications", state.token!)).status, { timeout: 30_000 }).toBe(401)
  }, 180_000)

  it("lets the admin create a webhook subscription whose signed delivery reaches a loopback receiver", async () => {
    const admin = await pageOf("admin")
    await admin.goto(`${consoleUrl}/admin/webhooks/new`)
    await admin.fill("#url", receiver.url("/console"))
    await admin.fill("#description", "created in the browser test")
    await admin.check("input[name=events][value='application.created']")
    await snap(admin, "admin-webhook-new")
    await submit(admin, "main button[type=submit]")
    state.secret = await admin.inputValue("#secret")
    expect(state.secret).toMatch(/^whsec_/)
    await snap(admin, "admin-webhook-secret")
    state.subscriptionId = /\/console\/admin\/webhooks\/([0-9a-f-]{36})/.exec(await admin.content())![1]!

    await cli(["app", "put", "--tenant", "demo"], JSON.stringify({ code: "CONSOLE-1", name: "Made for the console test" }))
    const [delivery] = await receiver.waitFor("/console", 1)
    expect(delivery!.headers["x-service-event"]).toBe("application.created")
    const timestamp = String(delivery!.headers["x-service-timestamp"])
    expect(delivery!.headers["x-service-signature"]).toBe(expectedSignature(state.secret, timestamp, delivery!.body))

    await expect.poll(async () => {
      await admin.goto(`${consoleUrl}/admin/webhooks/${state.subscriptionId}`)
      return admin.locator("tr[data-delivery]").first().textContent()
    }, { timeout: 60_000 }).toContain("succeeded")
    await snap(admin, "admin-webhook-deliveries")
    await admin.locator("tr[data-delivery] a").first().click()
    expect(await admin.textContent("main")).toContain("200")
    await snap(admin, "admin-webhook-attempts")
    await admin.goto(`${consoleUrl}/admin/webhooks`)
    expect(await admin.textContent("main")).toContain(receiver.url("/console"))
    await snap(admin, "admin-webhooks")
  }, 180_000)

  it("lets the admin register a partner client whose credentials get an access token that reads the API", async () => {
    const admin = await pageOf("admin")
    await admin.goto(`${consoleUrl}/admin/partners`)
    await admin.fill("#name", "erp-sync")
    await admin.selectOption("#scope", "read")
    await submit(admin, "form[action$='/partners/new'] button[type=submit]")
    const clientId = await admin.inputValue("#clientId")
    const clientSecret = await admin.inputValue("#secret")
    expect(clientId).toMatch(/^service-partner-erp-sync-[0-9a-z]{8}$/)
    await snap(admin, "admin-partner-secret")
    const granted = await fetch(`${apiUrl}/oauth/token`, {
      method: "POST",
      headers: { authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString("base64")}`, "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=client_credentials"
    })
    expect(granted.status).toBe(200)
    const { access_token } = (await granted.json()) as { access_token: string }
    expect((await api("/referentiel/applications", access_token)).status).toBe(200)
    await admin.goto(`${consoleUrl}/admin/partners`)
    expect(await admin.content()).not.toContain(clientSecret)
    await snap(admin, "admin-partners")
  }, 180_000)

  it("gives the developer the 403 page on admin pages, and refuses a form with a forged CSRF token", async () => {
    const developer = await pageOf("developer")
    const refused = await developer.goto(`${consoleUrl}/admin/requests`)
    expect(refused!.status()).toBe(403)
    expect(await developer.textContent("main")).toContain("Tenant-admins only")
    await snap(developer, "developer-403")

    await developer.goto(`${consoleUrl}/tokens/new`)
    await developer.fill("#justification", justification)
    await developer.evaluate(() => {
      for (const input of (globalThis as any).document.querySelectorAll("input[name=csrf]")) input.value = "forged-by-a-test"
    })
    expect((await submit(developer, "main button[type=submit]")).status()).toBe(403)
    expect(await developer.textContent("main")).toContain("This form cannot be accepted")
    await snap(developer, "developer-forged-csrf")
    const requests: Array<{ readonly status: string }> = await cli(["pat", "requests", "--tenant", "demo"])
    expect(requests).toHaveLength(1)
  }, 180_000)

  it("never shows another tenant's requests or subscriptions to that tenant's admin", async () => {
    await cli(["tenant", "create", "other", "--admin-email", "admin@other.example"])
    const other = await pageOf("other")
    await setPassword(other, await linkMailedTo("admin@other.example"), "other-admin")
    await signIn(other, "admin@other.example", "other-admin")
    // A request waiting in demo, which a page that ignored the tenant would list.
    const waiting = await cli(["pat", "request", "--tenant", "demo", "--email", "dev@demo.example", "--scope", "read", "--days", "1",
      "--justification", "Waits in demo while another tenant's admin looks."])
    await other.goto(`${consoleUrl}/admin/requests`)
    expect(await other.content()).not.toContain("dev@demo.example")
    expect(await other.content()).not.toContain(waiting.id)
    // A decision on it from the other tenant is refused as if it did not exist.
    const decided = await other.request.post(`${consoleUrl}/admin/requests/${waiting.id}/approve`, { form: { csrf: await other.inputValue("input[name=csrf]").catch(() => "") } })
    expect(decided.status()).not.toBe(200)
    expect(JSON.stringify(await cli(["pat", "requests", "--tenant", "demo", "--status", "pending"]))).toContain(waiting.id)
    await other.goto(`${consoleUrl}/admin/webhooks`)
    expect(await other.content()).not.toContain(receiver.url("/console"))
    await snap(other, "other-admin-webhooks")
    const foreign = await other.goto(`${consoleUrl}/admin/webhooks/${state.subscriptionId}`)
    expect(foreign!.status()).toBe(404)
    expect(await other.content()).not.toContain(receiver.url("/console"))
  }, 180_000)

  it("shows the admin the security log, which `portfolio audit` gives operators too", async () => {
    // A member's failed sign-in is filed in her tenant's log; one with an e-mail of no account under no tenant.
    const stranger = await (await newContext()).newPage()
    const failSignIn = async (email: string) => {
      await stranger.goto(`${consoleUrl}/sign-in`)
      await stranger.fill("#email", email)
      await stranger.fill("#password", "not the password at all")
      const [refused] = await Promise.all([stranger.waitForResponse((r) => r.request().method() === "POST"), stranger.click("button[type=submit]")])
      await stranger.waitForLoadState()
      return refused.status()
    }
    for (const email of ["dev@demo.example", "nobody@nowhere.example"]) expect(await failSignIn(email)).toBe(401)
    await snap(stranger, "sign-in-failed")
    // Five failures lock the e-mail out for the window.
    for (let i = 0; i < 5; i++) expect(await failSignIn("locked@nowhere.example")).toBe(401)
    expect(await failSignIn("locked@nowhere.example")).toBe(429)
    expect(await stranger.textContent("main")).toContain("Too many failed attempts")
    await snap(stranger, "sign-in-locked")
    const admin = await pageOf("admin")
    await admin.goto(`${consoleUrl}/admin/security`)
    const log = await admin.textContent("main")
    for (const action of ["sign_in", "member_invited", "invitation_accepted", "pat_requested", "pat_request_approved", "pat_revoked", "webhook_created", "partner_client_created", "csrf_refused"]) {
      expect(log).toContain(action)
    }
    await snap(admin, "admin-security-log")
    const audit: Array<{ readonly action: string; readonly actorEmail: string }> = await cli(["audit", "--tenant", "demo"])
    expect(audit.find((e) => e.action === "pat_request_approved")?.actorEmail).toBe("admin@demo.example")
    expect(audit.filter((e) => e.action === "pat_requested").map((e) => e.actorEmail)).toContain("dev@demo.example")
    const later = await runCli(["audit", "--tenant", "demo", "--since", "2999-01-01T00:00:00Z", "--json"], { env: { DATA_DIR: dataDir } })
    expect(JSON.parse(later.stdout)).toEqual([])
    expect(audit.filter((e) => e.action === "sign_in_failed").map((e) => e.actorEmail)).toEqual(["dev@demo.example"])
    expect(log).toContain("sign_in_failed")
    const unattributed: Array<{ readonly action: string; readonly actorEmail: string; readonly tenantId: string | null }> = await cli(["audit", "--unattributed"])
    expect(unattributed.filter((e) => e.actorEmail === "nobody@nowhere.example").map((e) => [e.action, e.tenantId])).toEqual([["sign_in_failed", null]])
    expect(unattributed.filter((e) => e.actorEmail === "locked@nowhere.example").map((e) => e.action).sort()).toEqual([...Array(5).fill("sign_in_failed"), "sign_in_locked"])
    expect(unattributed.every((e) => e.tenantId === null)).toBe(true)
    // One of the two, never both nor neither.
    for (const args of [["audit"], ["audit", "--tenant", "demo", "--unattributed"]]) {
      const refused = await runCli(args, { env: { DATA_DIR: dataDir } })
      expect(refused.code, args.join(" ")).not.toBe(0)
      expect(refused.stderr + refused.stdout).toContain("--unattributed")
    }
  }, 180_000)

  it("lets a member of two tenants choose the workspace first, then work in the one chosen only", async () => {
    // The demo admin's account becomes the admin of a second tenant too: it has a password, so no mail.
    const third = await cli(["tenant", "create", "third", "--admin-email", "admin@demo.example"])
    expect(third.welcome).toBeNull()
    const page = await (await newContext()).newPage()
    await page.goto(`${consoleUrl}/sign-in`)
    await page.fill("#email", "admin@demo.example")
    await page.fill("#password", password)
    await Promise.all([page.waitForURL(/\/console\/workspace$/), page.click("button[type=submit]")])
    const choices = await page.textContent("main")
    expect(choices).toContain("demo (tenant-admin)")
    expect(choices).toContain("third (tenant-admin)")
    await snap(page, "workspace-chooser")
    // A request waiting in demo: the page of the workspace chosen shows it or not.
    const waiting = await cli(["pat", "request", "--tenant", "demo", "--email", "dev@demo.example", "--scope", "read", "--days", "7",
      "--justification", "Waits in demo while its admin works in another tenant."])
    await page.check(`input[name=tenantId][value='${third.tenantId}']`)
    await Promise.all([page.waitForURL(/\/console\/tokens$/), page.click("main button[type=submit]")])
    await page.goto(`${consoleUrl}/admin/requests`)
    expect(await page.textContent("main")).not.toContain("dev@demo.example")
    // Back to demo through the switch: its waiting request is there.
    await page.click("nav a[href='/console/workspace']")
    await page.locator("label", { hasText: "demo (tenant-admin)" }).locator("input").check()
    await Promise.all([page.waitForURL(/\/console\/tokens$/), page.click("main button[type=submit]")])
    await page.goto(`${consoleUrl}/admin/requests`)
    expect(await page.textContent("main")).toContain("dev@demo.example")
    expect(await page.content()).toContain(`/console/admin/requests/${waiting.id}/approve`)
  }, 180_000)

  it("renders the API reference under its content policy, its script from the API's own origin", async () => {
    const context = await newContext()
    const page = await context.newPage()
    const refused: Array<string> = []
    page.on("console", (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) refused.push(message.text())
    })
    const scripts: Array<string> = []
    page.on("request", (request) => {
      if (request.resourceType() === "script") scripts.push(request.url())
    })
    await page.goto(`${apiUrl}/docs`)
    // Scalar draws the document's operations once its script ran.
    await page.getByText("List applications", { exact: false }).first().waitFor()
    await snap(page, "api-reference", false)
    expect(scripts).toEqual([`${apiUrl}/docs/api-reference.js`])
    expect(refused).toEqual([])
    await context.close()
  }, 180_000)
})

/**
 * Single sign-on as a person goes through it, in the real browser: the sign-in page's workspace
 * form, the page that goes on by a `refresh` under the console's CSP, the 302 to the provider's
 * origin, the provider's own login page, and back to the callback with the `SameSite=Lax` state
 * cookie. The provider is the harness's (panva's oidc-provider) on 127.0.0.1; the connection is set
 * with the CLI, as an operator does (`npm start` allows a plain-http issuer on loopback).
 */
describe("signing in to the console through the tenant's provider, in a browser", () => {
  const slug = "browser-sso"
  const adminEmail = `admin@${slug}.example`
  const opPassword = "correct horse battery staple provider"
  const user = (sub: string, email: string, extra: Partial<TestUser> = {}): TestUser => ({ sub, email, emailVerified: true, password: opPassword, ...extra })
  const ana = `ana@${slug}.example`
  const ben = `ben@${slug}.example`
  let op: StartedProvider
  let secretDir = ""

  beforeAll(async () => {
    op = await startOpenIdProvider({
      clients: [{ clientId: "portfolio-browser", clientSecret: "browser-sso-client-secret-0123456789ab", redirectUris: [`${consoleUrl}/sso/${slug}/callback`] }],
      users: [user("idp-ana", ana, { groups: ["everyone", "ea-team"] }), user("idp-ben", ben, { emailVerified: false })]
    })
    await cli(["tenant", "create", slug, "--admin-email", adminEmail])
    secretDir = await mkdtemp(join(tmpdir(), "portfolio-browser-sso-"))
    await writeFile(join(secretDir, "secret"), "browser-sso-client-secret-0123456789ab\n", { mode: 0o600 })
    const set = await cli([
      "sso", "set", "--tenant", slug, "--issuer", op.issuer, "--client-id", "portfolio-browser",
      "--client-secret-file", join(secretDir, "secret"), "--domains", `${slug}.example`,
      "--role-claim", "groups", "--role-map", "ea-team=architect"
    ])
    expect(set).toMatchObject({ issuer: op.issuer, redirectUri: `${consoleUrl}/sso/${slug}/callback`, domains: [`${slug}.example`] })
  }, 120_000)

  afterAll(async () => {
    await op?.close()
    if (secretDir !== "") await rm(secretDir, { recursive: true, force: true })
  }, 60_000)

  /** From the console's sign-in page to the provider's login form, which it answers with `login`. */
  const throughProvider = async (page: Page, login: string, name: string) => {
    await page.goto(`${consoleUrl}/sign-in`)
    await page.fill("#tenant", slug)
    await snap(page, `${name}-sign-in`)
    // The workspace form, then the page's refresh to /console/sso/<slug>, then its 302 to the provider.
    await Promise.all([page.waitForURL((url) => url.href.startsWith(`${op.issuer}/interaction/`)), page.click("form[action='/console/sso'] button[type=submit]")])
    await page.fill("input[name=login]", login)
    await page.fill("input[name=password]", opPassword)
    await snap(page, `${name}-provider`)
  }

  it("signs a verified person of the connection's domain in, as an SSO_JIT member with the role her groups map to", async () => {
    const context = await newContext()
    const page = await context.newPage()
    const refused: Array<string> = []
    page.on("console", (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) refused.push(message.text())
    })
    // The top-level navigations, redirects included, as `<status> <origin><path>`: the chain the browser followed.
    const hops: Array<string> = []
    page.on("response", (response) => {
      if (response.request().isNavigationRequest() && response.frame() === page.mainFrame()) {
        const url = new URL(response.url())
        hops.push(`${response.status()} ${url.origin}${url.pathname}`)
      }
    })
    await throughProvider(page, ana, "sso")
    await Promise.all([page.waitForURL(`${consoleUrl}/tokens`), page.getByRole("button", { name: "Sign in", exact: true }).click()])
    const consoleOrigin = new URL(consoleUrl).origin
    expect(hops).toEqual(expect.arrayContaining([
      `200 ${consoleOrigin}/console/sso`,
      `302 ${consoleOrigin}/console/sso/${slug}`,
      `303 ${consoleOrigin}/console/sso/${slug}/callback`,
      `200 ${consoleOrigin}/console/tokens`
    ]))
    // The refresh, then the provider's origin, then back: in that order.
    const at = (hop: string) => hops.indexOf(hop)
    expect(at(`302 ${consoleOrigin}/console/sso/${slug}`)).toBeGreaterThan(at(`200 ${consoleOrigin}/console/sso`))
    expect(hops.findIndex((hop) => hop.includes(op.issuer))).toBeGreaterThan(at(`302 ${consoleOrigin}/console/sso/${slug}`))
    expect(at(`303 ${consoleOrigin}/console/sso/${slug}/callback`)).toBeGreaterThan(hops.findIndex((hop) => hop.includes(op.issuer)))
    expect(await page.textContent("header .who")).toBe(`${ana} (architect)`)
    expect(await page.textContent("header")).toContain(slug)
    await snap(page, "sso-signed-in")
    expect(refused).toEqual([])
    expect((await context.cookies()).filter((c) => c.name === "console_sso")).toEqual([])
    await context.close()

    const { token } = await cli(["pat", "create", "--tenant", slug, "--email", adminEmail, "--scope", "read", "--days", "1"])
    const listed = await api("/tenant/invitations/members", token)
    expect(listed.status).toBe(200)
    const members = (await listed.json()) as Array<{ readonly userEmail: string; readonly source: string; readonly arbRole: string }>
    expect(members.find((m) => m.userEmail === ana)).toMatchObject({ source: "SSO_JIT", arbRole: "architect" })
  }, 180_000)

  it("refuses a person whose e-mail the provider has not verified: the 401 page, and no session", async () => {
    const context = await newContext()
    const page = await context.newPage()
    await throughProvider(page, ben, "sso-unverified")
    const [callback] = await Promise.all([
      page.waitForResponse((r) => r.url().startsWith(`${consoleUrl}/sso/${slug}/callback`)),
      page.getByRole("button", { name: "Sign in", exact: true }).click()
    ])
    await page.waitForLoadState()
    expect(callback.status()).toBe(401)
    expect(await page.textContent("main")).toContain("did not succeed")
    await snap(page, "sso-unverified-refused")
    expect((await context.cookies()).map((c) => c.name)).not.toContain("console_session")
    await page.goto(`${consoleUrl}/tokens`)
    expect(new URL(page.url()).pathname).toBe("/console/sign-in")
    await context.close()
  }, 180_000)
})
