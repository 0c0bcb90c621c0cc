import pg from "pg"
import { send } from "../support/http.js"
import type { WebhookReceiver } from "../support/webhookReceiver.js"
import type { RunningCluster } from "./topology.js"
import { admin, createPartner, type Fixture, partnerToken, RollbackPrefix, type Traffic } from "./traffic.js"

/**
 * The invariants the drills check after each fault (docs/architecture.md, "Replicas and faults"):
 * acknowledged writes readable, committed events delivered to every matching subscription, none
 * from a rolled-back transaction, the rate limit's bound, and the time to full recovery.
 */
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The receiver's paths: one subscription to every event, one to `application.updated` only. */
export const AllEvents = "/all"
export const UpdatesOnly = "/updated"

/** A read through the ingress, asked again while it answers 503 (a fault may still be settling). */
const readApplication = async (cluster: RunningCluster, token: string, code: string) => {
  for (let attempt = 0; ; attempt++) {
    const reply = await send(`${cluster.baseUrl}/referentiel/applications/${code}`, { token }).catch(() => undefined)
    if ((reply !== undefined && reply.status !== 503) || attempt >= 20) return reply
    await pause(500)
  }
}

export interface WritesCheck {
  readonly acknowledged: number
  readonly lost: ReadonlyArray<string>
}

/**
 * Every code with an acknowledged write reads as that write or a later one: a write whose answer
 * was lost may have been committed too, never one older than the last acknowledged.
 */
export const checkWrites = async (cluster: RunningCluster, fixture: Fixture, traffic: Traffic): Promise<WritesCheck> => {
  const lost: Array<string> = []
  let acknowledged = 0
  for (const [code, entry] of traffic.writes) {
    // What was acknowledged before the read was sent: the writers go on meanwhile.
    const before = entry.acknowledged
    if (before === 0) continue
    acknowledged++
    const reply = await readApplication(cluster, fixture.readTokens[0]!, code)
    const name = reply?.status === 200 ? String(reply.body.name) : undefined
    const at = name === undefined ? -1 : entry.values.lastIndexOf(name)
    if (at < before - 1) lost.push(`${code}: read ${reply?.status ?? "no answer"} ${name ?? ""}, acknowledged ${entry.values[before - 1]}`)
  }
  return { acknowledged, lost }
}

export interface RollbacksCheck {
  /** Writes rolled back at their commit since the drills began (5xx answers of the rollback lane). */
  readonly rolledBack: number
  /** What of them was seen anyway: an acknowledgement, a row, an outbox event, a delivery, a public read. */
  readonly seen: ReadonlyArray<string>
}

/** Nothing of a rolled-back transaction is anywhere: not acknowledged, stored, in the outbox, delivered or readable. */
export const checkRollbacks = async (cluster: RunningCluster, fixture: Fixture, receiver: WebhookReceiver, traffic: Traffic): Promise<RollbacksCheck> => {
  const seen = traffic.rolledBack.acknowledged.map((code) => `${code} acknowledged`)
  const client = new pg.Client({ connectionString: cluster.postgres.url })
  await client.connect()
  try {
    const like = `${RollbackPrefix}%`
    const rows = await client.query<{ code: string }>("SELECT code FROM referential.applications WHERE code LIKE $1", [like])
    seen.push(...rows.rows.map((row) => `${row.code} stored`))
    const events = await client.query<{ id: string }>("SELECT id FROM referential.outbox WHERE payload::text LIKE $1", [`%"${like}`])
    seen.push(...events.rows.map((row) => `event ${row.id} in the outbox`))
  } finally {
    await client.end()
  }
  seen.push(...receiver.received.filter((delivery) => delivery.body.includes(`"${RollbackPrefix}`)).map((delivery) => `delivered to ${delivery.path}`))
  const read = await readApplication(cluster, fixture.readTokens[0]!, `${RollbackPrefix}0`)
  if (read?.status !== 404) seen.push(`${RollbackPrefix}0 read: ${read?.status ?? "no answer"}`)
  return { rolledBack: traffic.rolledBack.count, seen }
}

export interface EventsCheck {
  readonly committed: number
  readonly missing: number
  readonly duplicates: number
  /** Delivered ids no committed transaction wrote. */
  readonly unknown: number
}

const committedEvents = async (cluster: RunningCluster) => {
  const client = new pg.Client({ connectionString: cluster.postgres.url })
  await client.connect()
  try {
    return (await client.query<{ id: string; subject: string }>("SELECT id, subject FROM referential.outbox")).rows
  } finally {
    await client.end()
  }
}

/**
 * Waits (up to `timeoutMs`) until every event the referential committed has reached each matching
 * subscription, then counts what is missing, delivered more than once, or unknown.
 */
export const checkEvents = async (cluster: RunningCluster, receiver: WebhookReceiver, timeoutMs: number, signal?: AbortSignal): Promise<EventsCheck> => {
  const committed = await committedEvents(cluster)
  const expected = [
    { path: AllEvents, ids: committed.map((event) => event.id) },
    { path: UpdatesOnly, ids: committed.filter((event) => event.subject.endsWith("application.updated")).map((event) => event.id) }
  ]
  const delivered = (path: string) => receiver.at(path).map((delivery) => String(delivery.headers["x-service-event-id"]))
  const missingOf = () => expected.flatMap(({ ids, path }) => {
    const got = new Set(delivered(path))
    return ids.filter((id) => !got.has(id))
  })
  const deadline = Date.now() + timeoutMs
  while (missingOf().length > 0 && Date.now() < deadline && signal?.aborted !== true) await pause(250)
  // One reading of what arrived, then the events committed by then: the load goes on, and an
  // event is delivered only once committed.
  const arrived = expected.map(({ path }) => delivered(path))
  const known = new Set((await committedEvents(cluster)).map((event) => event.id))
  return {
    committed: committed.length,
    missing: missingOf().length,
    duplicates: arrived.reduce((sum, ids) => sum + ids.length - new Set(ids).size, 0),
    unknown: new Set(arrived.flat().filter((id) => !known.has(id))).size
  }
}

export interface RateLimitProbe {
  readonly admitted: number
  readonly bound: number
  readonly other: ReadonlyArray<string>
}

/**
 * A partner client of its own asking as fast as one caller does while the fault lasts, until
 * `until` settles (within the window: at most 55 s): what passes must stay within the documented bound of a window
 * the bucket was away in, the limit and every replica's share (docs/product-rules.md, "Rate
 * limiting"): what replicas counted alone, the bucket does not know once it answers again.
 */
export const probeRateLimit = async (cluster: RunningCluster, fixture: Fixture, limit: number, replicas: number) => {
  const partner = await createPartner(cluster, fixture.tenantId, `drills-probe-${Date.now()}`)
  const token = await partnerToken(cluster, partner)
  if (token.status !== 200) throw new Error(`the probe's token: ${token.status} ${token.text}`)
  return {
    run: async (until: Promise<unknown>): Promise<RateLimitProbe> => {
      let admitted = 0
      const other: Array<string> = []
      let over = false
      const stop = () => void (over = true)
      until.then(stop, stop)
      const deadline = Date.now() + 55_000
      while (!over && Date.now() < deadline) {
        const reply = await send(`${cluster.baseUrl}/referentiel/functions?limit=1`, { token: token.body.access_token }).catch((error: Error) => error)
        if (reply instanceof Error) other.push(reply.message)
        else if (reply.status === 200) admitted++
        else if (reply.status !== 429 && !(reply.status === 503 && reply.headers.get("retry-after") !== null)) other.push(`${reply.status}`)
        await pause(100)
      }
      return { admitted, bound: limit + replicas * Math.ceil(limit / replicas), other }
    }
  }
}

/**
 * From the end of a fault: until every replica answers its probe, and a new write is read back
 * through the ingress and delivered to the subscription; what was still missing when it gave up.
 */
export const timeToRecovery = async (cluster: RunningCluster, fixture: Fixture, receiver: WebhookReceiver, canary: string, signal?: AbortSignal, timeoutMs = 120_000): Promise<number | string> => {
  const started = Date.now()
  const deadline = started + timeoutMs
  /** Given up: past the timeout, or the drills stopping. */
  const over = () => Date.now() > deadline || signal?.aborted === true
  /** The first replica that does not answer its probe, or undefined when all do. */
  const unready = async () => {
    for (const replica of cluster.replicas) {
      if (!replica.running) return `${replica.name} is not running`
      const reply = await fetch(`http://127.0.0.1:${replica.listen.admin}/readyz`, { signal: AbortSignal.timeout(2_000) }).catch(() => undefined)
      const text = (await reply?.text().catch(() => "")) ?? ""
      if (reply?.status !== 200) return `${replica.name} answers /readyz ${reply?.status ?? "nothing"} ${text.slice(0, 200)}`
    }
    return undefined
  }
  for (let waiting = await unready(); waiting !== undefined; waiting = await unready()) {
    if (over()) return waiting
    await pause(250)
  }
  let written: string | undefined = "no answer"
  while (written !== undefined) {
    const reply = await admin(cluster, "referential", "PUT", `/admin/tenants/${fixture.tenantId}/applications/${canary}`, { name: canary, criticality: "IMPORTANT" }).catch(() => undefined)
    written = reply !== undefined && reply.status === 200 ? undefined : `the canary write answered ${reply?.status ?? "nothing"}`
    if (written !== undefined && over()) return written
    if (written !== undefined) await pause(250)
  }
  for (;;) {
    const read = await send(`${cluster.baseUrl}/referentiel/applications/${canary}`, { token: fixture.readTokens[1]! }).catch(() => undefined)
    const delivered = receiver.at(AllEvents).some((delivery) => delivery.body.includes(`"${canary}"`))
    if (read?.status === 200 && read.body.name === canary && delivered) return Date.now() - started
    if (over()) return `the canary read ${read?.status ?? "nothing"}, ${delivered ? "delivered" : "not delivered"}`
    await pause(100)
  }
}
