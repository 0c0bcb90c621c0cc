import { adminCall, type AdminService } from "./adminCall.js"
import { generateKeyPairSync, randomBytes } from "node:crypto"
import { startSystem } from "../../deploy/local/system.js"
import { cliJson, fromSources, runCli } from "./cli.js"
import { createDatabase, type FreshDatabase } from "@portfolio/platform/testing"
import { client, type RequestOptions } from "./http.js"
import type { SharedSystemRecord } from "./sharedSystems.js"

type Running = Awaited<ReturnType<typeof startSystem>>

/** The `ERRORS_URL` every suite starts its system with, so that problem `type`s can be checked exactly. */
export const errorsUrl = "https://errors.blackbox.test/api"

export { operatorIdentity } from "./adminCall.js"

export interface CreatedTenant {
  readonly slug: string
  readonly id: string
  readonly adminEmail: string
  readonly adminSub: string
}

export interface CreatedPat {
  readonly id: string
  readonly token: string
}

/** A running system (one test file's, or the files' that share it), with the operator's tools around it. */
export class Harness {
  /** The last 4,000 to 5,000 log lines of every service. */
  readonly logs: Array<string> = []
  /** How many lines were ever added to `logs`, which drops its oldest: see logMark and logsSince. */
  #logged = 0
  readonly secret = randomBytes(32).toString("hex")
  /** The gateway's OAUTH_SIGNING_KEYS, in `env` too, so that another gateway of the same system accepts its partner tokens. */
  readonly signingKeys = JSON.stringify([{
    kid: "blackbox",
    pem: generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ format: "pem", type: "sec1" })
  }])
  #system: Running | undefined
  #database: FreshDatabase | undefined
  #exited: string | undefined

  get system(): Running {
    if (this.#system === undefined) throw new Error("the system is not started (beforeAll failed?)")
    return this.#system
  }
  get baseUrl() {
    return this.system.baseUrl
  }
  /** The console's pages (`/console`, its CONSOLE_URL): the origin a browser test must use for its forms to be taken. */
  get consoleUrl() {
    return this.system.consoleUrl
  }
  get env(): Record<string, string> {
    return { ...this.system.env, INTERNAL_SECRET: this.secret, OAUTH_SIGNING_KEYS: this.signingKeys, ERRORS_URL: errorsUrl }
  }

  async start(extraEnv: Record<string, string>) {
    this.logs.length = 0
    this.#logged = 0
    this.#exited = undefined
    this.#database = await createDatabase("bb")
    try {
      this.#system = await startSystem({
        databaseUrl: this.#database.url,
        compiled: !fromSources,
        env: { INTERNAL_SECRET: this.secret, OAUTH_SIGNING_KEYS: this.signingKeys, ERRORS_URL: errorsUrl, LOG_LEVEL: "Info", ...extraEnv },
        quiet: true,
        onLog: (service, line) => {
          this.logs.push(`${service} | ${line}`)
          this.#logged++
          if (this.logs.length > 5000) this.logs.splice(0, 1000)
          if (process.env["BLACKBOX_LOGS"] === "1") process.stderr.write(`${service} | ${line}\n`)
        }
      })
    } catch (error) {
      console.error(`system failed to start; last log lines:\n${this.logs.slice(-80).join("\n")}`)
      throw error
    }
    const system = this.#system
    void system.exited.then(({ code, service }) => {
      if (this.#system === system) this.#exited = `${service} exited (${code})`
    })
  }

  /** A mark in the log, for `logsSince`. */
  get logMark(): number {
    return this.#logged
  }

  /** The lines logged since `mark`, whatever `logs` has dropped of its oldest meanwhile (those too, if dropped: then it throws). */
  logsSince(mark: number): ReadonlyArray<string> {
    const count = this.#logged - mark
    if (count > this.logs.length) throw new Error(`${count - this.logs.length} of the lines logged since the mark were dropped`)
    return this.logs.slice(this.logs.length - count)
  }

  /** Why the system can no longer serve (a service has exited, a crash or `stop()`), if it cannot. */
  get exited(): string | undefined {
    return this.#exited
  }

  /** What is left to remove should this process die before `stop()`: the services' processes, the database, the data folder. */
  get resources(): SharedSystemRecord {
    return { pids: this.system.processes.map(({ pid }) => pid), database: this.#database!.name, dataDir: this.system.env["DATA_DIR"]! }
  }

  /** Stops the services and drops the database; `start` may then run again. */
  async stop() {
    try {
      await this.#system?.stop()
    } finally {
      await this.#database?.drop()
      this.#system = undefined
      this.#database = undefined
    }
  }

  /** A client of the public API through the gateway, with a PAT or without. */
  api(token?: string) {
    return client(this.baseUrl, token)
  }

  cli(args: ReadonlyArray<string>, input?: string) {
    return runCli(args, { env: this.env, ...(input === undefined ? {} : { input }) })
  }

  cliJson(args: ReadonlyArray<string>, input?: string) {
    return cliJson(args, { env: this.env, ...(input === undefined ? {} : { input }) })
  }

  // The fixtures below call the admin APIs the CLI calls, as the operator, without a CLI process each
  // (~0.6 CPU-s apiece on this 2-core machine); the compiled CLI itself is driven where it is the
  // subject (pat-requests.test.ts's first steps, and the other `system.cli` callers).
  async createTenant(slug: string, adminEmail = `admin@${slug}.example`): Promise<CreatedTenant> {
    const created = await this.adminOk("provisioning", "POST", "/admin/tenants", { slug, adminEmail })
    return { slug, id: created.tenant.id, adminEmail, adminSub: created.admin.userSub }
  }

  /** A PAT of the member `email` (the tenant's admin by default), minted as `portfolio pat create` does. */
  async createPat(tenant: CreatedTenant, scope: "read" | "write", email = tenant.adminEmail, days?: number): Promise<CreatedPat> {
    const { member } = await this.adminOk("provisioning", "GET", `/admin/tenants/${tenant.slug}/members/${encodeURIComponent(email)}`)
    const pat = await this.adminOk("gateway", "POST", "/admin/pats", {
      tenantId: tenant.id,
      userSub: member.userSub,
      email: member.userEmail,
      role: member.arbRole,
      scope,
      ...(days === undefined ? {} : { days })
    })
    return { id: pat.id, token: pat.token }
  }

  /** The application written as `portfolio app put` writes it: `code` beside the fields of the PUT body. */
  putApplication(tenant: CreatedTenant, application: Record<string, unknown>) {
    const { code, ...fields } = application
    return this.adminOk("referential", "PUT", `/admin/tenants/${tenant.id}/applications/${encodeURIComponent(String(code))}`, fields)
  }

  /** A request to an admin API (`service` names the port) as the operator (see adminCall). */
  admin(service: AdminService, method: string, path: string, options: Omit<RequestOptions, "method"> = {}) {
    return adminCall(this.secret, this.system.adminUrls[service], service, method, path, options)
  }

  /** An admin call that must succeed; returns its JSON body. */
  async adminOk(service: AdminService, method: string, path: string, body?: unknown): Promise<any> {
    const reply = await this.admin(service, method, path, body === undefined ? {} : { body })
    if (reply.status >= 300) throw new Error(`${method} ${path} on the ${service} admin API answered ${reply.status}: ${reply.text}`)
    return reply.body
  }
}
