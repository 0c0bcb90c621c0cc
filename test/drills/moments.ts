import { readdirSync, readFileSync, readlinkSync } from "node:fs"
import pg from "pg"
import type { WebhookReceiver } from "../support/webhookReceiver.js"
import { loggedRequests } from "./loadBalancer.js"
import type { Replica, RunningCluster } from "./topology.js"
import type { Traffic } from "./traffic.js"
import { pause } from "./watchdog.js"

/**
 * The moments the issue names for a replica's `kill -9` (docs/architecture.md, "Replicas and
 * faults"): a relay mid-publish, a dispatcher mid-POST, a gateway with requests in flight. Each
 * watches the victim until it is in that state, freezes it (SIGSTOP: it can go no further), looks
 * again at what it is frozen in, which is what it dies in, and kills it (`kill -9` takes a
 * stopped process as it is). Each answers what it saw, printed in the drill's row.
 */

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

/** How long a victim is watched for its moment before it is killed wherever it is. */
export const MomentWaitMs = 15_000

export interface Moment {
  /** Whether the kill landed in the named moment. */
  readonly landed: boolean
  /** What the victim was doing when it died, for the drill's row. */
  readonly state: string
}

/**
 * The local ports of the TCP connections `pid` holds (its sockets' inodes in /proc/<pid>/fd, found
 * in the network namespace's table): what PostgreSQL calls its `client_port`, what a server it
 * calls sees as the remote port.
 */
export const localTcpPorts = (pid: number): ReadonlySet<number> => {
  const inodes = new Set<string>()
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const socket = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))
        if (socket !== null) inodes.add(socket[1]!)
      } catch {
        // Closed meanwhile.
      }
    }
  } catch {
    return new Set()
  }
  const ports = new Set<number>()
  for (const table of ["tcp", "tcp6"]) {
    let text = ""
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, "utf8")
    } catch {
      continue
    }
    for (const line of text.split("\n").slice(1)) {
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      const columns = line.trim().split(/\s+/)
      if (columns.length > 9 && inodes.has(columns[9]!)) ports.add(Number.parseInt(columns[1]!.split(":")[1]!, 16))
    }
  }
  return ports
}

/** SIGSTOP to `victim`'s process (never to pid 0, which would be this process's whole group); answers the pid. */
const freeze = (victim: Replica): number => {
  const pid = victim.pid
  if (pid <= 0) throw new Error(`${victim.name} is not running`)
  process.kill(pid, "SIGSTOP")
  return pid
}

/**
 * Frozen, `victim` is looked at once more (`frozenState`): dying in that state, it is killed; out
 * of it already, it goes on and is watched again. Past `MomentWaitMs`, it is killed where it is.
 */
const killInMoment = async (
  victim: Replica,
  signal: AbortSignal,
  inMoment: () => Promise<boolean> | boolean,
  frozenState: () => Promise<string | undefined> | string | undefined,
  missed: string
): Promise<Moment> => {
  const deadline = Date.now() + MomentWaitMs
  while (Date.now() < deadline) {
    signal.throwIfAborted()
    if (await inMoment()) {
      const pid = freeze(victim)
      let state: string | undefined
      try {
        state = await frozenState()
      } finally {
        if (state === undefined) process.kill(pid, "SIGCONT")
      }
      if (state !== undefined) {
        await victim.kill()
        return { landed: true, state }
      }
    }
    await pause(5, signal)
  }
  await victim.kill()
  return { landed: false, state: missed }
}

/**
 * The referential's relay mid-publish: its connection to PostgreSQL (found by port) in the
 * relay's transaction, the batch read `FOR UPDATE SKIP LOCKED` and not yet marked published and
 * committed. Killed then, the rows go back to the other replica's relay, published again under
 * the same message ids.
 */
export const relayMidPublish = async (cluster: RunningCluster, victim: Replica, signal: AbortSignal): Promise<Moment> => {
  const client = new pg.Client({ connectionString: cluster.postgres.url })
  client.on("error", () => undefined)
  await client.connect()
  try {
    const publishing = async () => {
      const ports = [...localTcpPorts(victim.pid)]
      const { rows } = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE client_port = ANY($1::int[]) AND xact_start IS NOT NULL
            AND (query ILIKE '%outbox%FOR UPDATE SKIP LOCKED%' OR query ILIKE 'UPDATE %outbox%SET published_at%')`,
        [ports]
      )
      return rows[0]!.n > 0
    }
    return await killInMoment(victim, signal, publishing, async () => {
      if (!(await publishing())) return undefined
      const { rows } = await client.query<{ n: number }>("SELECT count(*)::int AS n FROM referential.outbox WHERE published_at IS NULL")
      return `mid-publish (its relay's transaction open, ${plural(rows[0]!.n, "row")} unpublished)`
    }, `not seen mid-publish in ${MomentWaitMs / 1000} s`)
  } finally {
    await client.end().catch(() => undefined)
  }
}

/**
 * The dispatcher mid-POST: the receiver holds a POST that came from one of its connections
 * (it answers after `delayMs`). Looked at in the same tick as the SIGSTOP, before the receiver can
 * answer: what it holds then, the victim never reads the answer of.
 */
export const dispatcherMidPost = (receiver: WebhookReceiver, victim: Replica, signal: AbortSignal): Promise<Moment> => {
  const heldFromVictim = () => {
    const ports = localTcpPorts(victim.pid)
    return receiver.holding.filter((held) => ports.has(held.remotePort))
  }
  return killInMoment(victim, signal, () => heldFromVictim().length > 0, () => {
    const held = heldFromVictim()
    if (held.length === 0) return undefined
    const oldest = Math.max(...held.map((request) => Date.now() - request.since))
    return `mid-POST (${plural(held.length, "POST")} of it held, the oldest ${oldest} ms)`
  }, `not seen mid-POST in ${MomentWaitMs / 1000} s`)
}

/** How many public reads a gateway's kill sends at once, half of which the ingress gives it. */
const BurstSize = 6

/**
 * A gateway with requests in flight: frozen, a burst of public reads goes through the ingress (with
 * the load's own), which gives it its share of them; then it is killed with them unanswered. The
 * ingress's access log says afterwards which requests were in flight to it at the kill and what
 * their clients got: `inFlightAt` reads it once they are answered.
 */
export const gatewayWithRequestsInFlight = async (cluster: RunningCluster, traffic: Traffic, victim: Replica, signal: AbortSignal) => {
  freeze(victim)
  let killedAt = 0
  let burst: Promise<unknown> = Promise.resolve()
  try {
    burst = Promise.all(Array.from({ length: BurstSize }, () => traffic.read("/referentiel/applications?limit=20")))
    // Long enough for the ingress to pass its requests on, far below its timeouts.
    await new Promise((resolve) => setTimeout(resolve, 50))
    killedAt = Date.now()
  } finally {
    await victim.kill()
  }
  // Answered by the other gateway once the ingress sees this one gone.
  await burst
  signal.throwIfAborted()
  return { killedAt, inFlightAt: () => requestsInFlight(cluster.accessLog(), victim.listen.port!, killedAt) }
}

/** The requests sent to the gateway on `port` before `killedAt` that it never answered, and what their clients got. */
export const requestsInFlight = (accessLog: string, port: number, killedAt: number): Moment => {
  const address = `127.0.0.1:${port}`
  // The log's times are to the millisecond: a little slack either side.
  const cut = loggedRequests(accessLog).filter((request) =>
    request.startedAt <= killedAt + 2 &&
    request.endedAt >= killedAt - 2 &&
    request.upstreams.some((upstream) => upstream.address === address && !/^[1-4]\d\d$/.test(upstream.status))
  )
  if (cut.length === 0) return { landed: false, state: "no request in flight" }
  const answers = new Map<number, number>()
  for (const request of cut) answers.set(request.status, (answers.get(request.status) ?? 0) + 1)
  const retried = cut.filter((request) => request.upstreams.length > 1).length
  return {
    landed: true,
    state: `${plural(cut.length, "request")} in flight (${retried} retried on the other; answered ${[...answers].map(([status, n]) => `${status}×${n}`).join(", ")})`
  }
}
