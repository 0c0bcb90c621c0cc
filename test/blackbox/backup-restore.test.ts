import { createDatabase, type FreshDatabase, restartableJetStream } from "@portfolio/platform/testing"
import { spawn } from "node:child_process"
import { generateKeyPairSync, randomBytes } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { afterAll, beforeAll, expect, it } from "vitest"
import { type RunningSystem, startSystem } from "../../deploy/local/system.js"
import { adminCall, type AdminService } from "../support/adminCall.js"
import { fromSources, repoRoot, runCli } from "../support/cli.js"
import { eventually } from "../support/eventually.js"
import { send } from "../support/http.js"
import { expectedSignature, WebhookReceiver } from "../support/webhookReceiver.js"

/**
 * The README's "Backup and restore", followed on a running system: `pg_dump -Fc` while writes
 * are in flight, `pg_restore` into a new database, the README's republish statement run as it is
 * written there, and the system started again on it with the same secrets and an empty JetStream
 * (a new private nats-server, the harder case the runbook recommends: nothing of the old broker
 * survives, so whatever the dump alone cannot bring back is lost and shows). Two subscriptions:
 * `/owed`'s receiver refuses from before the dump until the restore, so that every event it gets
 * after the first ones is owed by the restored system alone (deliveries pending in the dump, and
 * events published to the old NATS that the dispatcher, paused, had not recorded at the dump);
 * `/dup`'s accepts throughout, so that what it got after the dump comes again as the counted
 * at-least-once duplicates, and what was written after the dump shows whether the restored system
 * sends it again.
 */
const secret = randomBytes(32).toString("hex")
const signingKeys = JSON.stringify([{
  kid: "backup-restore",
  pem: generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ format: "pem", type: "sec1" })
}])
const receiver = new WebhookReceiver()
/** The status each request of `receiver.received` was answered, at the same index. */
const statuses: Array<number> = []
/** Whether `/owed` is refused (503); `/dup` never is. */
let refusing = false
const stores = [mkdtempSync(join(tmpdir(), "backup-js-old-")), mkdtempSync(join(tmpdir(), "backup-js-new-"))]
const dumpDir = mkdtempSync(join(tmpdir(), "backup-dump-"))
const databases: Array<FreshDatabase> = []
const brokers: Array<Awaited<ReturnType<typeof restartableJetStream>>> = []
let system: RunningSystem | undefined

const start = (databaseUrl: string, natsUrl: string) =>
  startSystem({
    databaseUrl,
    compiled: !fromSources,
    quiet: true,
    env: {
      INTERNAL_SECRET: secret,
      OAUTH_SIGNING_KEYS: signingKeys,
      NATS_URL: natsUrl,
      LOG_LEVEL: "Warning",
      // Retries every 2 s for minutes, never disabling: the deliveries refused before the dump stay
      // pending through it, rather than failing for good or disabling the subscription.
      WEBHOOK_RETRY_SCHEDULE: Array.from({ length: 150 }, () => "2s").join(","),
      WEBHOOK_DISABLE_AFTER_FAILURES: "1000000",
      WEBHOOK_SWEEP_INTERVAL: "2s"
    }
  })

const admin = async (service: AdminService, method: string, path: string, body?: unknown): Promise<any> => {
  const reply = await adminCall(secret, system!.adminUrls[service], service, method, path, body === undefined ? {} : { body })
  if (reply.status >= 300) throw new Error(`${method} ${path} on ${service} answered ${reply.status}: ${reply.text}`)
  return reply.body
}

const api = (method: string, path: string, token: string, body?: unknown) =>
  send(`${system!.baseUrl}${path}`, { method, token, ...(body === undefined ? {} : { body }) })

const run = (command: string, args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
    const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "pipe"] })
    let stderr = ""
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stderr }))
  })

const query = async <R extends Record<string, unknown>>(url: string, statement: string): Promise<Array<R>> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query<R>(statement)).rows
  } finally {
    await client.end()
  }
}

const waitUntil = (condition: () => Promise<boolean> | boolean, timeoutMs = 120_000) => eventually(condition, (holds) => holds, timeoutMs, 250)

type Path = "/owed" | "/dup"
const eventIdOf = (index: number) => receiver.received[index]!.headers["x-service-event-id"] as string
const codeOf = (index: number) => JSON.parse(receiver.received[index]!.body).data.code as string
/** Indexes of the requests to `path` from `from` (inclusive) to `to` (exclusive). */
const requestsTo = (path: Path, from = 0, to = receiver.received.length) =>
  receiver.received.slice(from, to).flatMap((request, i) => (request.path === path ? [from + i] : []))
/** Event ids `path` answered 2xx among those requests. */
const deliveredIds = (path: Path, from = 0, to = receiver.received.length) =>
  new Set(requestsTo(path, from, to).filter((i) => statuses[i]! < 300).map(eventIdOf))

beforeAll(async () => {
  await receiver.start()
  receiver.answer = (path) => {
    // Called right after the request was recorded: its status goes at the same index.
    const status = refusing && path === "/owed" ? 503 : 200
    statuses.push(status)
    return { status }
  }
}, 30_000)

afterAll(async () => {
  await system?.stop()
  await Promise.all(brokers.map((broker) => broker.stop()))
  await receiver.stop()
  await Promise.all(databases.map((database) => database.drop()))
  for (const dir of [...stores, dumpDir]) rmSync(dir, { recursive: true, force: true })
}, 90_000)

it("restores a dump taken under writes: every event of before it delivered, none of after, tokens, partner and subscription working", async () => {
  // --- A running system with a tenant, its tokens, a partner and a subscription. ---
  const original = await createDatabase("bb")
  databases.push(original)
  const oldBroker = await restartableJetStream(stores[0]!)
  brokers.push(oldBroker)
  system = await start(original.url, oldBroker.url)

  const created = await admin("provisioning", "POST", "/admin/tenants", { slug: "bb-backup", adminEmail: "admin@bb-backup.example" })
  const tenantId: string = created.tenant.id
  const { member } = await admin("provisioning", "GET", `/admin/tenants/bb-backup/members/${encodeURIComponent("admin@bb-backup.example")}`)
  const pat = (scope: "read" | "write") =>
    admin("gateway", "POST", "/admin/pats", { tenantId, userSub: member.userSub, email: member.userEmail, role: member.arbRole, scope })
  const readPat = await pat("read")
  const writePat = await pat("write")
  const revokedAfterDump = await pat("read")
  const partner = await admin("gateway", "POST", `/admin/tenants/${tenantId}/partner-clients`, { name: "bk-erp", scope: "read" })
  const owedHook = await admin("webhook-dispatcher", "POST", `/admin/tenants/${tenantId}/webhooks`, { url: receiver.url("/owed") })
  const dupHook = await admin("webhook-dispatcher", "POST", `/admin/tenants/${tenantId}/webhooks`, { url: receiver.url("/dup") })
  const jwksBefore = (await send(`${system.baseUrl}/.well-known/jwks.json`)).body
  const put = (code: string) => admin("referential", "PUT", `/admin/tenants/${tenantId}/applications/${code}`, { name: `Backup ${code}`, criticality: "IMPORTANT" })

  // Delivered before the dump, and recorded so.
  for (let i = 0; i < 20; i++) await put(`BK-A-${i}`)
  await waitUntil(() => deliveredIds("/owed").size >= 20 && deliveredIds("/dup").size >= 20)
  expect([deliveredIds("/owed").size, deliveredIds("/dup").size]).toEqual([20, 20])

  // Pending at the dump: recorded by the dispatcher, every attempt to `/owed` refused.
  refusing = true
  for (let i = 0; i < 10; i++) await put(`BK-P-${i}`)
  const pending = () => admin("webhook-dispatcher", "GET", `/admin/webhooks/${owedHook.id}/deliveries?status=pending&limit=1000`)
  await waitUntil(async () => (await pending()).length >= 10)
  expect(await pending()).toHaveLength(10)

  // Published but not recorded at the dump: the dispatcher is paused (SIGSTOP, a consumer fallen
  // behind), the referential's relay goes on publishing to the old NATS.
  const dispatcher = system.processes.find((p) => p.service === "webhook-dispatcher")!
  process.kill(dispatcher.pid, "SIGSTOP")
  for (let i = 0; i < 10; i++) await put(`BK-U-${i}`)
  const unpublished = async () => Number((await query<{ n: string }>(original.url, "SELECT count(*) AS n FROM referential.outbox WHERE published_at IS NULL"))[0]!.n)
  await waitUntil(async () => (await unpublished()) === 0, 30_000)
  expect(await unpublished()).toBe(0)

  // --- The dump, with two writers going on through it and after it. ---
  interface Write { readonly code: string; readonly startedAt: number; doneAt?: number }
  const writes: Array<Write> = []
  let written = 0
  let stopWriting = false
  const writer = async () => {
    while (!stopWriting) {
      const write: Write = { code: `BK-F-${written++}`, startedAt: Date.now() }
      writes.push(write)
      await put(write.code)
      write.doneAt = Date.now()
    }
  }
  const writers = [writer(), writer()]
  await waitUntil(() => writes.filter((w) => w.doneAt !== undefined).length >= 6, 30_000)
  const dumpedAt = new Date().toISOString().replace(/\.\d+Z$/, "Z")
  const dumpFile = join(dumpDir, `portfolio-${dumpedAt}.dump`)
  const dumpStarted = Date.now()
  const dumped = await run("pg_dump", ["-Fc", "-f", dumpFile, original.url])
  const dumpEnded = Date.now()
  expect(dumped.stderr).toBe("")
  expect(dumped.code).toBe(0)
  // Writes after the dump, and a security change: all undone by the restore.
  await waitUntil(() => writes.filter((w) => w.startedAt > dumpEnded && w.doneAt !== undefined).length >= 6, 30_000)
  stopWriting = true
  await Promise.all(writers)
  const patAfterDump = await pat("read")
  // The dispatcher catches up, as it would have: `/dup` gets every write, the dump's and the later
  // ones, before the system stops; `/owed` still refuses.
  process.kill(dispatcher.pid, "SIGCONT")
  const codesAt = (path: Path) => new Set(requestsTo(path).filter((i) => statuses[i]! < 300).map(codeOf))
  const allWritten = [...Array.from({ length: 10 }, (_, i) => `BK-U-${i}`), ...writes.map((w) => w.code)]
  await waitUntil(() => allWritten.every((code) => codesAt("/dup").has(code)))
  expect(allWritten.filter((code) => !codesAt("/dup").has(code))).toEqual([])
  await admin("gateway", "POST", "/admin/pats/revoke", { tokenOrId: revokedAfterDump.token })
  const revokedStatus = async () => (await api("GET", "/referentiel/applications/BK-A-0", revokedAfterDump.token)).status
  await waitUntil(async () => (await revokedStatus()) === 401, 10_000)
  expect(await revokedStatus()).toBe(401)
  const beforeDump = writes.filter((w) => w.doneAt! < dumpStarted)
  const afterDump = writes.filter((w) => w.startedAt > dumpEnded)
  const duringDump = writes.filter((w) => !beforeDump.includes(w) && !afterDump.includes(w))

  await system.stop()
  system = undefined
  await oldBroker.stop()
  const postedBeforeRestore = receiver.received.length

  // --- The restore, as the README says, into a new database; then an empty JetStream. ---
  const restored = await createDatabase("bb")
  databases.push(restored)
  const restoreStarted = Date.now()
  const pgRestored = await run("pg_restore", ["--exit-on-error", "--no-owner", "--no-acl", "-d", restored.url, dumpFile])
  expect(pgRestored.stderr).toBe("")
  expect(pgRestored.code).toBe(0)
  const restoreMs = Date.now() - restoreStarted
  // Without the republish statement, the events the paused dispatcher had not recorded are
  // published in the dump, unknown to its dispatcher, and in no stream: the gap the statement closes.
  const neverRecorded = await query<{ id: string }>(restored.url, `
    SELECT o.id FROM referential.outbox o
    WHERE o.payload->'data'->>'code' LIKE 'BK-U-%' AND o.published_at IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM webhook_dispatcher.events e WHERE e.id = o.id)`)
  expect(neverRecorded).toHaveLength(10)
  const readme = readFileSync(join(repoRoot, "README.md"), "utf8")
  const republish = /<!-- restore:republish -->\n```sh\n([\s\S]*?)```\n<!-- \/restore:republish -->/.exec(readme)?.[1]
  expect(republish, "the README's republish step").toBeDefined()
  const republished = await run("bash", ["-c", republish!], { RESTORED_URL: restored.url, DUMPED_AT: dumpedAt })
  expect(republished.code, republished.stderr).toBe(0)

  const newBroker = await restartableJetStream(stores[1]!)
  brokers.push(newBroker)
  refusing = false
  system = await start(restored.url, newBroker.url)

  // --- What the restored system holds and does. ---
  const committed = new Map((await query<{ id: string; code: string }>(restored.url, "SELECT id, payload->'data'->>'code' AS code FROM referential.outbox")).map((row) => [row.id, row.code]))
  const paths: ReadonlyArray<Path> = ["/owed", "/dup"]
  const lostAt = (path: Path) => {
    const delivered = deliveredIds(path)
    return [...committed].filter(([id]) => !delivered.has(id)).map(([, code]) => code)
  }
  await waitUntil(() => paths.every((path) => lostAt(path).length === 0), 180_000)
  expect({ "/owed": lostAt("/owed"), "/dup": lostAt("/dup") }).toEqual({ "/owed": [], "/dup": [] })

  // What `/owed` got after the restore was owed by the restored system alone: before it, only the
  // first 20 events had been answered 2xx there.
  const owedBefore = deliveredIds("/owed", 0, postedBeforeRestore)
  expect([...committed].filter(([id, code]) => !code.startsWith("BK-A-") && owedBefore.has(id))).toEqual([])

  // Nothing of after the dump is sent after the restore, unless it had been delivered already.
  const sentAgain = paths.flatMap((path) => {
    const before = deliveredIds(path, 0, postedBeforeRestore)
    return requestsTo(path, postedBeforeRestore).filter((i) => !committed.has(eventIdOf(i))).map((i) => ({ path, i, before: before.has(eventIdOf(i)) }))
  })
  const ghosts = sentAgain.filter(({ before }) => !before)
  expect(ghosts.map(({ i, path }) => `${path} ${codeOf(i)}`)).toEqual([])
  const afterDumpEvents = new Set(receiver.received.map((_, i) => eventIdOf(i)).filter((id) => !committed.has(id)))

  // Writes: those acknowledged before the dump are there, those begun after it are not.
  const present = async (code: string) => (await api("GET", `/referentiel/applications/${code}`, readPat.token)).status
  for (const write of beforeDump) expect(await present(write.code), write.code).toBe(200)
  for (const write of afterDump) expect(await present(write.code), write.code).toBe(404)
  const duringKept = (await Promise.all(duringDump.map((w) => present(w.code)))).filter((status) => status === 200).length

  // Tokens, partner, signing keys: the dump's, with the kept secrets.
  expect((await api("GET", "/referentiel/applications/BK-A-0", readPat.token)).status).toBe(200)
  expect((await api("POST", "/tenant/invitations", writePat.token, { email: "after-restore@bb-backup.example", arbRole: "viewer" })).status).toBe(201)
  expect((await api("GET", "/referentiel/applications/BK-A-0", patAfterDump.token)).status).toBe(401)
  // The revocation made after the dump is undone: the README tells operators to make it again.
  expect((await api("GET", "/referentiel/applications/BK-A-0", revokedAfterDump.token)).status).toBe(200)
  const token = await send(`${system.baseUrl}/oauth/token`, {
    method: "POST",
    body: "grant_type=client_credentials",
    headers: {
      authorization: `Basic ${Buffer.from(`${partner.clientId}:${partner.clientSecret}`).toString("base64")}`,
      "content-type": "application/x-www-form-urlencoded"
    }
  })
  expect(token.status, token.text).toBe(200)
  expect((await api("GET", "/referentiel/applications", token.body.access_token)).status).toBe(200)
  expect((await send(`${system.baseUrl}/.well-known/jwks.json`)).body).toEqual(jwksBefore)

  // The subscription delivers a new event, and every POST of the run is signed with its secret.
  const postedBeforeNew = receiver.received.length
  await put("BK-N-0")
  const gotNew = (path: Path) => requestsTo(path, postedBeforeNew).some((i) => statuses[i]! < 300 && codeOf(i) === "BK-N-0")
  await waitUntil(() => gotNew("/owed") && gotNew("/dup"), 60_000)
  expect([gotNew("/owed"), gotNew("/dup")]).toEqual([true, true])
  for (const request of receiver.received) {
    const timestamp = request.headers["x-service-timestamp"] as string
    const hook = request.path === "/owed" ? owedHook : dupHook
    expect(request.headers["x-service-signature"]).toBe(expectedSignature(hook.secret, timestamp, request.body))
  }

  // The operator's check of the README: nothing left pending.
  const cliEnv = { ...system.env, INTERNAL_SECRET: secret }
  let stillPending: Array<unknown> = []
  await waitUntil(async () => {
    const listed = await runCli(["webhook", "deliveries", owedHook.id, "--status", "pending", "--json"], { env: cliEnv })
    stillPending = listed.code === 0 ? JSON.parse(listed.stdout) : [listed.stderr]
    return stillPending.length === 0
  }, 60_000)
  expect(stillPending).toEqual([])

  const duplicates = (path: Path) => requestsTo(path).filter((i) => statuses[i]! < 300).length - deliveredIds(path).size
  console.log(
    `backup and restore: dump ${statSync(dumpFile).size} bytes in ${dumpEnded - dumpStarted} ms, restored in ${restoreMs} ms; ` +
      `${committed.size} events committed before the dump, each delivered to both subscriptions ` +
      `(duplicates: /owed ${duplicates("/owed")}, /dup ${duplicates("/dup")}); ` +
      `writes around the dump: ${beforeDump.length} before (kept), ${duringDump.length} in flight (${duringKept} kept), ${afterDump.length} after (gone); ` +
      `${afterDumpEvents.size} events of after the dump POSTed before the restore, ${sentAgain.length} sent again after it (${ghosts.length} never delivered before)`
  )
}, 600_000)
