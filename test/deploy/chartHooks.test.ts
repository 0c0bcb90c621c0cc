import { spawn } from "node:child_process"
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { allOptions, chart, container, envOf, find, type K8sObject, minimal, useHelm } from "./chartRendering.js"
import { invalid } from "./kubernetesSchemas.js"
import { mailListed, tenantCreated } from "@portfolio/cli/Output"
import { Member, OutboundMail, Tenant, TenantWithAdmin, WelcomeLink } from "@portfolio/domain"
import { DateTime } from "effect"

// What runs around the Deployments: the migration Job (pre-install/pre-upgrade), the first tenant
// (post-install/post-upgrade), `helm test`, and the admintools pod. The scripts the chart puts in
// those pods are run here too, against local stand-ins of the services and of the CLI.
const { helmRun, render } = useHelm()

const prefix = "rel-architecture-portfolio"
const services = ["gateway", "referential", "provisioning", "webhook-dispatcher", "console"] as const
/** The services with a NATS identity: the console uses no NATS. */
const natsServices = services.filter((component) => component !== "console")
const hook = (object: K8sObject) => object.metadata.annotations?.["helm.sh/hook"]
const weight = (object: K8sObject) => Number(object.metadata.annotations?.["helm.sh/hook-weight"] ?? "0")
const refusal = (...values: ReadonlyArray<string>) =>
  helmRun("template", "rel", chart, ...minimal, ...values.flatMap((value) => ["--set", value])).then(
    () => "accepted",
    (error: { stderr: string }) => error.stderr
  )

/** A container's environment with the chart Secret's name and the mode taken out, to compare the Job's with the Deployments'. */
const comparableEnv = (env: ReadonlyArray<any>, secretName: string) =>
  env
    .filter((e) => e.name !== "MIGRATIONS" && e.name !== "MIGRATIONS_WAIT_TIMEOUT")
    .map((e) => (e.valueFrom?.secretKeyRef?.name === secretName ? { ...e, valueFrom: { secretKeyRef: { ...e.valueFrom.secretKeyRef, name: "<chart secret>" } } } : e))

describe("the migration Job", () => {
  let objects: ReadonlyArray<K8sObject>
  beforeAll(async () => {
    objects = await render()
  })

  it("is a hook that Helm runs, and waits for, before it creates or changes the Deployments", () => {
    const job = find(objects, "Job", `${prefix}-migrations`)
    expect(job.metadata.annotations).toEqual({
      "helm.sh/hook": "pre-install,pre-upgrade",
      "helm.sh/hook-weight": "0",
      "helm.sh/hook-delete-policy": "before-hook-creation"
    })
    // The Deployments are release objects, never hooks: Helm applies them after every pre-* hook succeeded.
    for (const object of objects.filter((o) => o.kind !== "Job" && o.kind !== "Pod" && o.metadata.name !== `${prefix}-migrations`)) {
      expect(hook(object), `${object.kind}/${object.metadata.name}`).toBeUndefined()
    }
    expect(job.spec).toMatchObject({ backoffLimit: 3, activeDeadlineSeconds: 600, ttlSecondsAfterFinished: 86400 })
    expect(job.spec.template.spec.restartPolicy).toBe("Never")
  })

  it("reads a copy of the chart's Secret made just before it (pre-install: the Secret does not exist yet), deleted once the hooks are over", () => {
    const copy = find(objects, "Secret", `${prefix}-migrations`)
    const secret = find(objects, "Secret", prefix)
    expect(hook(copy)).toBe("pre-install,pre-upgrade")
    expect(weight(copy)).toBeLessThan(weight(find(objects, "Job", `${prefix}-migrations`)))
    expect(copy.metadata.annotations?.["helm.sh/hook-delete-policy"]).toBe("before-hook-creation,hook-succeeded,hook-failed")
    // The same render draws the generated INTERNAL_SECRET once for both.
    expect(copy.data).toEqual(secret.data)
    expect(Object.keys(copy.data).sort()).toEqual(["database-url", "internal-secret", "oauth-signing-keys", "smtp-url"])
  })

  it("runs every service's bundle with MIGRATIONS=only and the Deployment's own environment otherwise, serving nothing", () => {
    const pod = find(objects, "Job", `${prefix}-migrations`).spec.template.spec
    expect(pod.containers.map((c: any) => c.name)).toEqual([...services])
    for (const component of services) {
      const deployment = find(objects, "Deployment", `${prefix}-${component}`)
      const job = pod.containers.find((c: any) => c.name === component)
      expect(job.command).toEqual(["node", `dist/${component}/main.mjs`])
      expect(job.env.find((e: any) => e.name === "MIGRATIONS")).toEqual({ name: "MIGRATIONS", value: "only" })
      expect(comparableEnv(job.env, `${prefix}-migrations`)).toEqual(comparableEnv(container(deployment).env, prefix))
      expect(job.env.filter((e: any) => e.valueFrom?.secretKeyRef?.name === prefix)).toEqual([])
      expect(job.ports).toBeUndefined()
      expect(job.readinessProbe).toBeUndefined()
      expect(job.resources).toEqual({ requests: { cpu: "50m", memory: "128Mi" }, limits: { memory: "256Mi" } })
      expect(job.securityContext).toEqual(container(deployment).securityContext)
    }
    // A ServiceAccount the chart creates does not exist yet when a pre-install hook runs.
    expect(pod.serviceAccountName).toBeUndefined()
    expect(pod.volumes).toEqual([{ name: "tmp", emptyDir: { sizeLimit: "64Mi" } }])
  })

  it("uses an existing ServiceAccount, which does exist before the hook", async () => {
    const withAccount = await render("--set", "serviceAccount.create=false", "--set", "serviceAccount.name=portfolio-runner")
    expect(find(withAccount, "Job", `${prefix}-migrations`).spec.template.spec.serviceAccountName).toBe("portfolio-runner")
    expect(find(withAccount, "Deployment", `${prefix}-gateway`).spec.template.spec.serviceAccountName).toBe("portfolio-runner")
    expect(withAccount.filter((o) => o.kind === "ServiceAccount")).toEqual([])
  })

  it("keeps each service's NATS credential file apart, all in one pod", async () => {
    const creds = await render(
      "--set", "nats.auth.method=creds",
      ...natsServices.flatMap((component) => ["--set", `nats.auth.${component === "webhook-dispatcher" ? "webhookDispatcher" : component}.existingSecret=nats-${component}`])
    )
    const pod = find(creds, "Job", `${prefix}-migrations`).spec.template.spec
    for (const component of natsServices) {
      const job = pod.containers.find((c: any) => c.name === component)
      expect(job.volumeMounts).toContainEqual({ name: `nats-auth-${component}`, mountPath: "/etc/portfolio/nats-auth", readOnly: true })
      expect(pod.volumes.find((v: any) => v.name === `nats-auth-${component}`).secret.secretName).toBe(`nats-${component}`)
    }
    // The console migrates its schema with nothing of NATS.
    expect(pod.containers.find((c: any) => c.name === "console").volumeMounts).toEqual([{ name: "tmp", mountPath: "/tmp" }])
    expect(invalid(creds)).toEqual([])
  })

  it("reads the existing Secrets themselves when there is nothing of the chart's to copy", async () => {
    const existing = await render("-f", allOptions)
    expect(existing.filter((o) => o.kind === "Secret")).toEqual([])
    const job = find(existing, "Job", "ap-migrations").spec.template.spec.containers[0]
    expect(job.env.find((e: any) => e.name === "DATABASE_URL").valueFrom).toEqual({ secretKeyRef: { name: "portfolio-database", key: "url" } })
    expect(job.env.find((e: any) => e.name === "MIGRATIONS_WAIT_TIMEOUT")).toBeUndefined()
  })

  it("is left out with migrations.enabled=false, every service then migrating its own schema", async () => {
    const without = await render("--set", "migrations.enabled=false")
    expect(without.filter((o) => o.kind === "Job" || o.metadata.name.endsWith("-migrations"))).toEqual([])
    for (const component of services) {
      const deployment = find(without, "Deployment", `${prefix}-${component}`)
      expect(envOf(deployment, "MIGRATIONS").value).toBe("run")
      expect(envOf(deployment, "MIGRATIONS_WAIT_TIMEOUT")).toBeUndefined()
    }
  })
})

/** Runs `command` (argv) as the pod would, with `env`; answers its exit code and output. */
const runScript = (argv: ReadonlyArray<string>, env: Record<string, string>) =>
  new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    child.stdout.on("data", (chunk) => (output += chunk))
    child.stderr.on("data", (chunk) => (output += chunk))
    child.once("exit", (code) => resolve({ code, output }))
  })

/** A local HTTP server answering `routes[path]` (status and body), 404 otherwise. */
const servers: Array<Server> = []
const serve = async (routes: Record<string, readonly [number, string]>) => {
  const server = createServer((request, response) => {
    const [status, body] = routes[request.url ?? ""] ?? [404, ""]
    response.writeHead(status, { "content-type": "application/json" }).end(body)
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))))
})

/** What `portfolio tenant create --json` prints, from the CLI's own output: a welcome link mailed, or (null) none needed. */
const tenantCreateJson = (welcome: "mailed" | "password") => {
  const at = DateTime.makeUnsafe("2026-07-01T10:00:00.000Z")
  return JSON.stringify(tenantCreated(new TenantWithAdmin({
    tenant: new Tenant({ id: "10000000-0000-4000-8000-000000000001", slug: "acme", createdAt: at }),
    admin: new Member({ userSub: "sub-admin-acme", userEmail: "admin@acme.example", arbRole: "tenant-admin", source: "SIGNUP", grantedAt: at }),
    welcome: welcome === "password"
      ? null
      : new WelcomeLink({ invitationId: "55555555-0000-4000-8000-000000000001", expiresAt: DateTime.add(at, { days: 7 }) })
  })).json)
}

/** What `portfolio mail list --to <admin> --json` prints: the welcome mail, as the CLI encodes it. */
const welcomeMailJson = JSON.stringify(mailListed([new OutboundMail({
  id: 7,
  to: "admin@acme.example",
  subject: "Set your password for acme",
  text: "Hello,\n\nSet your password: https://portfolio.example.com/accept/welcome-token-1\nThe link works once, until 2026-07-08.",
  createdAt: DateTime.makeUnsafe("2026-07-01T10:00:00.000Z")
})]).json)

describe("the first tenant", () => {
  let objects: ReadonlyArray<K8sObject>
  let localMail: ReadonlyArray<K8sObject>
  const tmp = mkdtempSync(join(tmpdir(), "ap-first-tenant-"))
  const firstTenant = ["--set", "firstTenant.slug=acme", "--set", "firstTenant.adminEmail=admin@acme.example"]
  beforeAll(async () => {
    objects = await render(...firstTenant)
    localMail = await render(...firstTenant, "--set", "provisioning.mailTransport=local", "--set", "admintools.enabled=true")
  })
  afterAll(() => rmSync(tmp, { recursive: true, force: true }))

  it("is created by a post-install and post-upgrade hook, run as an operator against provisioning's admin API", () => {
    const job = find(objects, "Job", `${prefix}-first-tenant`)
    expect(job.metadata.annotations).toEqual({
      "helm.sh/hook": "post-install,post-upgrade",
      "helm.sh/hook-weight": "10",
      "helm.sh/hook-delete-policy": "before-hook-creation"
    })
    const pod = job.spec.template
    expect(pod.metadata.labels["architecture-portfolio/operator"]).toBe("true")
    const main = pod.spec.containers[0]
    const env = Object.fromEntries(main.env.map((e: any) => [e.name, e.value ?? e.valueFrom]))
    expect(env).toMatchObject({
      TENANT_SLUG: "acme",
      TENANT_ADMIN_EMAIL: "admin@acme.example",
      GATEWAY_ADMIN_URL: `http://${prefix}-gateway-admin:8081`,
      PROVISIONING_ADMIN_URL: `http://${prefix}-provisioning-admin:8085`,
      REFERENTIAL_ADMIN_URL: `http://${prefix}-referential-admin:8083`,
      WEBHOOK_ADMIN_URL: `http://${prefix}-webhook-dispatcher-admin:8087`,
      CONSOLE_ADMIN_URL: `http://${prefix}-console-admin:8089`,
      INTERNAL_SECRET: { secretKeyRef: { name: prefix, key: "internal-secret" } }
    })
    expect(main.securityContext.readOnlyRootFilesystem).toBe(true)
    expect(invalid([job])).toEqual([])
  })

  it("is not rendered without a slug, and refused with a slug but no admin, or a slug the service would refuse", async () => {
    expect((await render()).filter((o) => o.metadata.name.endsWith("first-tenant"))).toEqual([])
    expect(await refusal("firstTenant.slug=acme")).toContain("/firstTenant/adminEmail")
    expect(await refusal("firstTenant.slug=Acme Inc", "firstTenant.adminEmail=a@acme.example")).toContain("/firstTenant/slug")
    expect(await refusal("firstTenant.slug=acme", "firstTenant.adminEmail=not-an-email")).toContain("/firstTenant/adminEmail")
  })

  /** Runs the Job's script with a stand-in `portfolio` that records its calls and answers as told. */
  const runJob = async (options: {
    readonly tenantExists: boolean
    readonly createExit?: number
    readonly welcome?: "mailed" | "password"
    readonly rendered?: ReadonlyArray<K8sObject>
    /** What `mail list` prints; its exit code is 2 when undefined (provisioning unreachable, say). */
    readonly mail?: string
  }) => {
    const main = find(options.rendered ?? objects, "Job", `${prefix}-first-tenant`).spec.template.spec.containers[0]
    const calls = join(tmp, `calls-${Math.random()}`)
    const created = options.createExit === undefined || options.createExit === 0 ? `printf '%s\\n' '${tenantCreateJson(options.welcome ?? "mailed")}'; ` : ""
    writeFileSync(join(tmp, "portfolio"), [
      "#!/bin/sh",
      `echo "$*" >> "${calls}"`,
      `case "$1" in invitations) exit ${options.tenantExists ? 0 : 1} ;; tenant) ${created}exit ${options.createExit ?? 0} ;; mail) ${options.mail === undefined ? "exit 2" : `printf '%s\\n' '${options.mail}'; exit 0`} ;; esac`,
      "exit 3"
    ].join("\n"))
    chmodSync(join(tmp, "portfolio"), 0o755)
    const provisioning = await serve({ "/readyz": [200, "{}"] })
    const env = Object.fromEntries(main.env.filter((e: any) => e.value !== undefined).map((e: any) => [e.name, e.value]))
    const result = await runScript(main.command, { ...env, PATH: `${tmp}:${process.env["PATH"] ?? ""}`, PROVISIONING_ADMIN_URL: provisioning })
    let called: ReadonlyArray<string> = []
    try {
      called = readFileSync(calls, "utf8").trim().split("\n")
    } catch {
      called = []
    }
    return { ...result, called }
  }

  it("creates the tenant and its admin with the CLI once provisioning is ready, and says how the admin gets a token", async () => {
    const { called, code, output } = await runJob({ tenantExists: false })
    expect(code).toBe(0)
    expect(called).toEqual(["invitations list --tenant acme", "tenant create acme --admin-email admin@acme.example --json"])
    expect(output).toContain(`portfolio pat create --tenant acme --email admin@acme.example --scope write`)
    expect(output).toContain("The tenant acme is created: {\"tenantId\":\"10000000-0000-4000-8000-000000000001\"")
    expect(output).toContain("admin@acme.example was mailed a link to set their password; it works once, until 2026-07-08T10:00:00.000Z.")
    // Mailed through SMTP: nothing to read in the cluster.
    expect(output).not.toContain("portfolio mail list")
    expect(output).toContain("The invitations the tenant-admin sends are mailed through provisioning.smtp.")
  })

  it("with mail kept in the database, prints the exact command that reads the admin's link, never the link", async () => {
    const { called, code, output } = await runJob({ tenantExists: false, rendered: localMail, mail: welcomeMailJson })
    expect(code).toBe(0)
    expect(called).not.toContain("mail list --to admin@acme.example --json")
    expect(output).toContain("admin@acme.example was mailed a link to set their password; it works once, until 2026-07-08T10:00:00.000Z.")
    expect(output).toContain(
      `Mail is kept in the database (provisioning.mailTransport=local): read that link with\n  kubectl -n portfolio exec deploy/${prefix}-admintools -- portfolio mail list --to admin@acme.example\n`
    )
    expect(output).not.toContain("welcome-token-1")
  })

  it("with admintools off, names provisioning's own pod, whose image holds the CLI", async () => {
    const withoutTools = await render(...firstTenant, "--set", "provisioning.mailTransport=local")
    const { output } = await runJob({ tenantExists: false, rendered: withoutTools })
    expect(output).toContain(`kubectl -n portfolio exec deploy/${prefix}-provisioning -- portfolio mail list --to admin@acme.example\n`)
    expect(output).toContain(`kubectl -n portfolio exec deploy/${prefix}-provisioning -- portfolio mail list\n`)
    expect(output).not.toContain(`exec deploy/${prefix}-admintools -- portfolio mail list`)
  })

  it("says that no link was mailed when the admin's account already has a password", async () => {
    const { code, output } = await runJob({ tenantExists: false, welcome: "password", rendered: localMail })
    expect(code).toBe(0)
    expect(output).toContain("admin@acme.example already has a password (a member of another tenant): no link was mailed.")
    expect(output).not.toContain("was mailed a link")
    expect(output).not.toContain("portfolio mail list --to admin@acme.example")
  })

  it("leaves an existing tenant alone, so that upgrades may run it again", async () => {
    const { called, code, output } = await runJob({ tenantExists: true })
    expect(code).toBe(0)
    expect(called).toEqual(["invitations list --tenant acme"])
    expect(output).toContain("The tenant acme exists: left as it is.")
    expect(output).not.toContain("was mailed")
  })

  it("fails, for the Job to try again, when the tenant cannot be created", async () => {
    const { code } = await runJob({ tenantExists: false, createExit: 1 })
    expect(code).not.toBe(0)
  })
})

describe("helm test", () => {
  let objects: ReadonlyArray<K8sObject>
  beforeAll(async () => {
    objects = await render()
  })

  it("is a test hook Pod, labelled as an operator to reach the admin ports", () => {
    const pod = find(objects, "Pod", `${prefix}-test`)
    expect(pod.metadata.annotations).toEqual({ "helm.sh/hook": "test", "helm.sh/hook-delete-policy": "before-hook-creation,hook-succeeded" })
    expect(pod.metadata.labels?.["architecture-portfolio/operator"]).toBe("true")
    expect(JSON.parse(pod.spec.containers[0].env.find((e: any) => e.name === "TARGETS").value)).toEqual([
      `http://${prefix}-gateway-admin:8081/readyz`,
      `http://${prefix}-referential-admin:8083/readyz`,
      `http://${prefix}-provisioning-admin:8085/readyz`,
      `http://${prefix}-webhook-dispatcher-admin:8087/readyz`,
      `http://${prefix}-console-admin:8089/readyz`,
      `http://${prefix}-gateway:8080/api/v1/openapi.json`
    ])
    expect(pod.spec.restartPolicy).toBe("Never")
  })

  const runTest = async (targets: ReadonlyArray<string>) => {
    const main = find(objects, "Pod", `${prefix}-test`).spec.containers[0]
    return runScript([process.execPath, ...main.command.slice(1)], { TARGETS: JSON.stringify(targets) })
  }

  it("passes when every service is ready and the gateway serves the OpenAPI document", async () => {
    const up = await serve({ "/readyz": [200, "{}"], "/api/v1/openapi.json": [200, JSON.stringify({ openapi: "3.1.0" })] })
    const { code, output } = await runTest([`${up}/readyz`, `${up}/readyz`, `${up}/api/v1/openapi.json`])
    expect(output).toContain(`ok   200 ${up}/api/v1/openapi.json`)
    expect(code).toBe(0)
  })

  it("fails when one service is not ready, when one does not answer, or when the document is not OpenAPI", async () => {
    const up = await serve({ "/readyz": [200, "{}"], "/api/v1/openapi.json": [200, JSON.stringify({ openapi: "3.1.0" })] })
    const down = await serve({ "/readyz": [503, "{}"], "/api/v1/openapi.json": [200, "<html>"] })
    expect((await runTest([`${up}/readyz`, `${down}/readyz`])).code).toBe(1)
    expect((await runTest([`${up}/readyz`, "http://127.0.0.1:1/readyz"])).code).toBe(1)
    expect((await runTest([`${down}/api/v1/openapi.json`])).code).toBe(1)
  })

  it("is left out with tests.enabled=false", async () => {
    expect((await render("--set", "tests.enabled=false")).filter((o) => o.kind === "Pod")).toEqual([])
  })
})

describe("admintools", () => {
  it("is off by default; on, a pod with the CLI and its settings, labelled as an operator, serving nothing", async () => {
    expect((await render()).filter((o) => o.metadata.name.endsWith("admintools"))).toEqual([])
    const objects = await render("--set", "admintools.enabled=true")
    const deployment = find(objects, "Deployment", `${prefix}-admintools`)
    const pod = deployment.spec.template
    const main = pod.spec.containers[0]
    expect(main.command).toEqual(["sleep", "infinity"])
    expect(main.ports).toBeUndefined()
    expect(pod.metadata.labels["architecture-portfolio/operator"]).toBe("true")
    expect(pod.metadata.annotations["checksum/secret"]).toMatch(/^[0-9a-f]{64}$/)
    expect(envOf(deployment, "INTERNAL_SECRET").valueFrom).toEqual({ secretKeyRef: { name: prefix, key: "internal-secret" } })
    expect(envOf(deployment, "GATEWAY_ADMIN_URL").value).toBe(`http://${prefix}-gateway-admin:8081`)
    expect(envOf(deployment, "WEBHOOK_ADMIN_URL").value).toBe(`http://${prefix}-webhook-dispatcher-admin:8087`)
    // `portfolio audit` reads the console's security log.
    expect(envOf(deployment, "CONSOLE_ADMIN_URL").value).toBe(`http://${prefix}-console-admin:8089`)
    expect(main.securityContext.readOnlyRootFilesystem).toBe(true)
    expect(invalid([deployment])).toEqual([])
  })
})
