import { createDatabase, freePort, type FreshDatabase } from "@portfolio/platform/testing"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { send } from "../support/http.js"
import { accepts, ctrlC, type Started, StartWithinMs, startNpm, waitFor } from "../support/npmStart.js"

/**
 * The README's start command, as a person runs it: `npm start` in a terminal, then Ctrl-C (a
 * SIGINT to the whole foreground process group). Against a database of its own and free ports, so
 * that it cannot meet another suite or a system the developer runs.
 */

describe("npm start", () => {
  let database: FreshDatabase
  let dataDir: string
  let env: Record<string, string>
  let ports: Array<number>
  let running: Started | undefined

  beforeAll(async () => {
    database = await createDatabase("npmstart")
    dataDir = await mkdtemp(join(tmpdir(), "portfolio-start-"))
    ports = await Promise.all([1, 2, 3, 4, 5, 6, 7, 8, 9].map(() => freePort()))
    const [gateway, gatewayAdmin, referential, referentialAdmin, provisioning, provisioningAdmin, webhookAdmin, consolePort, consoleAdmin] = ports.map(String) as [
      string, string, string, string, string, string, string, string, string
    ]
    env = {
      DATABASE_URL: database.url,
      DATA_DIR: dataDir,
      PORT: gateway,
      ADMIN_PORT: gatewayAdmin,
      REFERENTIAL_PORT: referential,
      REFERENTIAL_ADMIN_PORT: referentialAdmin,
      PROVISIONING_PORT: provisioning,
      PROVISIONING_ADMIN_PORT: provisioningAdmin,
      WEBHOOK_ADMIN_PORT: webhookAdmin,
      CONSOLE_PORT: consolePort,
      CONSOLE_ADMIN_PORT: consoleAdmin
    }
  }, 60_000)

  afterAll(async () => {
    if (running !== undefined && !running.output().includes("Stopped.")) {
      try {
        process.kill(-running.child.pid!, "SIGKILL")
      } catch {
        // already gone
      }
    }
    await database?.drop()
    await rm(dataDir, { recursive: true, force: true })
  }, 60_000)

  let readToken = ""
  // The first start, kept for the last test: its failure is what a CI log's tail should show.
  let firstStart: Started | undefined
  let firstStartPassed = false

  it("starts every service and the console, creates and seeds the demo tenant on first start, and prints a read and a write PAT that work", async () => {
    running = firstStart = startNpm(env)
    const [, read, write] = await waitFor(running, /read: +(ap_pat_\w+)\n +write: +(ap_pat_\w+)/, "the demo PATs")
    await waitFor(running, /Ctrl-C stops everything/, "that it is ready")
    readToken = read!
    const baseUrl = `http://127.0.0.1:${env["PORT"]}/api/v1`
    expect(running.output()).toContain(`public API:  ${baseUrl}`)
    expect(running.output()).toMatch(/Seeded 200 applications, 500 business functions/)

    // The console's address as printed, which is also the only origin its forms are taken from.
    const consoleUrl = `http://127.0.0.1:${env["CONSOLE_PORT"]}/console`
    expect(running.output()).toContain(`console:     ${consoleUrl}\n`)
    const signIn = await send(`${consoleUrl}/sign-in`)
    expect({ status: signIn.status, type: signIn.headers.get("content-type") }).toEqual({ status: 200, type: expect.stringMatching(/^text\/html/) })
    expect(signIn.text).toContain('<form method="post" action="/console/sign-in">')

    const applications = await send(`${baseUrl}/referentiel/applications`, { token: read! })
    expect(applications.status).toBe(200)
    expect(applications.body).toHaveLength(200)
    const stats = await send(`${baseUrl}/referentiel/functions/stats`, { token: read! })
    expect(stats.status).toBe(200)

    // The write PAT is the demo tenant-admin's: it may invite.
    const invited = await send(`${baseUrl}/tenant/invitations`, { method: "POST", token: write!, body: { email: "first@demo.example", arbRole: "viewer" } })
    expect(invited.status).toBe(201)
    const readOnWrite = await send(`${baseUrl}/tenant/invitations`, { method: "POST", token: read!, body: { email: "second@demo.example", arbRole: "viewer" } })
    expect(readOnWrite.status).toBe(403)
    firstStartPassed = true
  }, StartWithinMs + 60_000)

  it("stops every process on Ctrl-C, exits 0 and frees every port", async () => {
    expect(await ctrlC(running!)).toBe(true)
    // The services may still log between the two, even half a line that the launcher's line ends.
    expect(running!.output()).toMatch(/SIGINT: stopping\.\.\.\n[\s\S]*Stopped\./)
    for (const port of ports) expect(await accepts(port)).toBe(false)
  })

  it("finds the demo tenant on the next start instead of seeding it again; earlier PATs still work", async () => {
    if (!firstStartPassed) {
      throw new Error(`the first start failed, so there is no demo tenant to find; its output:\n${firstStart?.output() ?? "(never started)"}`)
    }
    // The compiled services this time (`npm start -- --compiled`): the launcher's demo logic is what
    // is tested, and the first start already ran the sources.
    running = startNpm(env, ["--compiled"])
    await waitFor(running, /Ctrl-C stops everything/, "that it is ready")
    expect(running.output()).toMatch(/The 'demo' tenant exists/)
    expect(running.output()).not.toMatch(/Seeded/)
    const applications = await send(`http://127.0.0.1:${env["PORT"]}/api/v1/referentiel/applications`, { token: readToken })
    expect(applications.status).toBe(200)
    expect(applications.body).toHaveLength(200)
    expect(await ctrlC(running)).toBe(true)
    expect(running.output()).toContain("Stopped.")
  }, StartWithinMs + 60_000)
})
