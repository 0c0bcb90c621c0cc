import { randomUUID } from "node:crypto"
import pg from "pg"
import { adminCall, type AdminService } from "../support/adminCall.js"
import { type Reply, send } from "../support/http.js"
import type { RunningCluster } from "./topology.js"

/**
 * The drills' steady load, all through the cluster's load balancer: public reads with several PATs
 * and two partner clients, application writes (each producing a webhook), invitations made and
 * revoked, members provisioned and removed. Every public answer is classed; every acknowledged
 * write is remembered with the value it wrote.
 */
export interface Fixture {
  readonly tenantId: string
  readonly slug: string
  readonly readTokens: ReadonlyArray<string>
  readonly writeToken: string
  /** Two partner clients, each with its own client credentials and its own token. */
  readonly partners: ReadonlyArray<Partner>
}

export interface Partner {
  readonly clientId: string
  readonly secret: string
}

export interface Answers {
  ok: number
  unavailable: number
  /** Anything else: a status and what was asked, for the report. */
  readonly other: Array<string>
}

const emptyAnswers = (): Answers => ({ ok: 0, unavailable: 0, other: [] })

export const admin = (cluster: RunningCluster, service: AdminService, method: string, path: string, body?: unknown) =>
  adminCall(cluster.cliEnv["INTERNAL_SECRET"]!, cluster.addresses.adminUrls[service], service, method, path, body === undefined ? {} : { body })

export const adminOk = async (cluster: RunningCluster, service: AdminService, method: string, path: string, body?: unknown): Promise<any> => {
  const reply = await admin(cluster, service, method, path, body)
  if (reply.status >= 300) throw new Error(`${method} ${path} on the ${service} admin API answered ${reply.status}: ${reply.text}`)
  return reply.body
}

/** A partner's client-credentials token through the ingress. */
export const partnerToken = async (cluster: RunningCluster, partner: Partner): Promise<Reply> =>
  send(`${cluster.baseUrl}/oauth/token`, {
    method: "POST",
    headers: {
      authorization: `Basic ${Buffer.from(`${partner.clientId}:${partner.secret}`).toString("base64")}`,
      "content-type": "application/x-www-form-urlencoded"
    },
    body: "grant_type=client_credentials"
  })

export const createPartner = async (cluster: RunningCluster, tenantId: string, name: string): Promise<Partner> => {
  const created = await adminOk(cluster, "gateway", "POST", `/admin/tenants/${tenantId}/partner-clients`, { name, scope: "read" })
  return { clientId: created.clientId as string, secret: created.clientSecret as string }
}

export const prepareFixture = async (cluster: RunningCluster, slug: string): Promise<Fixture> => {
  const adminEmail = `admin@${slug}.example`
  const created = await adminOk(cluster, "provisioning", "POST", "/admin/tenants", { slug, adminEmail })
  const tenantId = created.tenant.id as string
  const { member } = await adminOk(cluster, "provisioning", "GET", `/admin/tenants/${slug}/members/${encodeURIComponent(adminEmail)}`)
  const pat = async (scope: "read" | "write") =>
    (await adminOk(cluster, "gateway", "POST", "/admin/pats", { tenantId, userSub: member.userSub, email: member.userEmail, role: member.arbRole, scope })).token as string
  return {
    tenantId,
    slug,
    readTokens: [await pat("read"), await pat("read"), await pat("read")],
    writeToken: await pat("write"),
    partners: [await createPartner(cluster, tenantId, "drills-reader-1"), await createPartner(cluster, tenantId, "drills-reader-2")]
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Classes a public answer: 2xx, or 503 with Retry-After, or anything else (a failure of the drill). */
const classify = (answers: Answers, what: string, reply: Reply | Error) => {
  if (reply instanceof Error) answers.other.push(`${what}: ${reply.message}`)
  else if (reply.status >= 200 && reply.status < 300) answers.ok++
  else if (reply.status === 503 && reply.headers.get("retry-after") !== null) answers.unavailable++
  else answers.other.push(`${what}: ${reply.status} ${reply.text.slice(0, 160)}`)
}

/** The prefix of the codes whose every write rolls back at its commit (installRollbackTrigger). */
export const RollbackPrefix = "ROLLBACK-"

/**
 * Makes every transaction that inserts an application coded `ROLLBACK-…` fail at its commit: a
 * deferred constraint trigger runs after the whole write, its outbox event included, so that the
 * transaction is rolled back with the event in it. In the drills' database only, never the product's.
 */
export const installRollbackTrigger = async (databaseUrl: string) => {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    await client.query(`
      CREATE FUNCTION public.drills_roll_back() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'the drills roll this transaction back at its commit'; END $$;
      CREATE CONSTRAINT TRIGGER drills_roll_back AFTER INSERT ON referential.applications
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.code LIKE '${RollbackPrefix}%')
        EXECUTE FUNCTION public.drills_roll_back();`)
  } finally {
    await client.end()
  }
}

/** What one client of the load got over the whole round: its 2xx, its 503s, the rest. */
export interface ClientTotals {
  ok: number
  unavailable: number
  other: number
  /** Partner clients: the tokens obtained (a new one every 4 minutes). */
  tokens: number
}

export interface Traffic {
  /** The public answers since the last call, which starts a new count. */
  readonly takeAnswers: () => Answers
  /** One public read more (a drill's burst), classed with the load's. */
  readonly read: (path: string) => Promise<void>
  /** Per client of the load (`pat-1`..., `partner-1`, `partner-2`, `members`), since the load started. */
  readonly totals: ReadonlyMap<string, ClientTotals>
  /** Code -> the values written to it in order, and how many of them were acknowledged. */
  readonly writes: ReadonlyMap<string, { readonly values: Array<string>; acknowledged: number }>
  /** The writes that rolled back at their commit (5xx), and those acknowledged although they should have (always a failure). */
  readonly rolledBack: { count: number; readonly acknowledged: Array<string> }
  readonly stop: () => Promise<void>
}

/**
 * Starts the load: three PAT readers (about 3 requests a second each), two partner readers (each
 * with its own client credentials and token, renewed every 4 minutes), two writers (each on application codes of its own, one write at a time), one member flow. Each loop
 * paces itself: the machine runs ten service processes, three NATS servers and PostgreSQL on two cores.
 */
export const startTraffic = (cluster: RunningCluster, fixture: Fixture): Traffic => {
  let answers = emptyAnswers()
  let running = true
  const totals = new Map<string, ClientTotals>()
  const writes = new Map<string, { values: Array<string>; acknowledged: number }>()
  /** A public request: its answer, or what failed it. */
  const publicCall = (call: () => Promise<Reply>): Promise<Reply | Error> => call().catch((error: Error) => error)
  const get = (path: string, token: string) => publicCall(() => send(`${cluster.baseUrl}${path}`, { token }))
  const totalOf = (client: string) => {
    const total = totals.get(client) ?? { ok: 0, unavailable: 0, other: 0, tokens: 0 }
    totals.set(client, total)
    return total
  }
  /** Classes an answer for the drill's row and for the client's totals; `done`: an answer that says what was asked took place. */
  const count = (client: string, what: string, reply: Reply | Error | "done") => {
    const total = totalOf(client)
    if (reply === "done") {
      answers.ok++
      total.ok++
      return
    }
    const before = { ok: answers.ok, unavailable: answers.unavailable, other: answers.other.length }
    classify(answers, what, reply)
    total.ok += answers.ok - before.ok
    total.unavailable += answers.unavailable - before.unavailable
    total.other += answers.other.length - before.other
  }

  const patReader = async (token: string, index: number) => {
    while (running) {
      // Only codes with an acknowledged write: a 404 for one of them is a write lost.
      const codes = [...writes].filter(([, entry]) => entry.acknowledged > 0).map(([code]) => code)
      const path = codes.length > 0 && Math.random() < 0.5 ? `/referentiel/applications/${codes[Math.floor(Math.random() * codes.length)]}` : "/referentiel/applications?limit=20"
      count(`pat-${index + 1}`, `GET ${path}`, await get(path, token))
      await pause(300)
    }
  }

  const partnerReader = async (partner: Partner, index: number) => {
    const client = `partner-${index + 1}`
    let token: string | undefined
    let tokenAt = 0
    // The partners take turns, so that their token requests and reads do not arrive together.
    await pause(index * 1_250)
    while (running) {
      // Tokens live 5 minutes: a new one every 4.
      if (token === undefined || Date.now() - tokenAt > 4 * 60_000) {
        const reply = await publicCall(() => partnerToken(cluster, partner))
        count(client, "POST /oauth/token", reply)
        if (!(reply instanceof Error) && reply.status === 200) {
          token = reply.body.access_token as string
          tokenAt = Date.now()
          totalOf(client).tokens++
        }
      } else count(client, `GET /referentiel/functions (${client})`, await get("/referentiel/functions?limit=20", token))
      // 24 a minute each: under a replica's share of the partner limit (30 of 60) while it counts alone.
      await pause(2_500)
    }
  }

  const writer = async (lane: number) => {
    for (let n = 0; running; n++) {
      const code = `DRILL-${lane}-${n % 25}`
      const entry = writes.get(code) ?? { values: [], acknowledged: 0 }
      writes.set(code, entry)
      const value = `Drill ${lane}.${n}`
      entry.values.push(value)
      const reply = await admin(cluster, "referential", "PUT", `/admin/tenants/${fixture.tenantId}/applications/${code}`, { name: value, criticality: "IMPORTANT" }).catch((error: Error) => error)
      if (!(reply instanceof Error) && reply.status === 200) entry.acknowledged = entry.values.length
      await pause(reply instanceof Error || reply.status >= 500 ? 500 : 150)
    }
  }

  // A write whose transaction rolls back after its event was written: neither it nor its event may ever be seen.
  const rollbacks = async () => {
    for (let n = 0; running; n++) {
      const code = `${RollbackPrefix}${n}`
      const reply = await admin(cluster, "referential", "PUT", `/admin/tenants/${fixture.tenantId}/applications/${code}`, { name: `Rolled back ${n}`, criticality: "IMPORTANT" }).catch((error: Error) => error)
      if (!(reply instanceof Error) && reply.status < 300) rolledBack.acknowledged.push(code)
      else if (!(reply instanceof Error) && reply.status >= 500) rolledBack.count++
      await pause(2_000)
    }
  }

  const members = async () => {
    const api = (method: string, path: string, body?: unknown) =>
      publicCall(() => send(`${cluster.baseUrl}${path}`, { method, token: fixture.writeToken, ...(body === undefined ? {} : { body }) }))
    const memberGone = async (email: string) =>
      (await admin(cluster, "provisioning", "GET", `/admin/tenants/${fixture.slug}/members/${encodeURIComponent(email)}`).catch(() => undefined))?.status === 404
    let lastInvitation = 0
    while (running) {
      // Provisioning allows 100 invitations per tenant per hour: one every 10 s keeps 15 minutes under it.
      if (Date.now() - lastInvitation >= 10_000) {
        lastInvitation = Date.now()
        const invited = await api("POST", "/tenant/invitations", { email: `invitee-${randomUUID()}@drills.example`, arbRole: "viewer" })
        count("members", "POST /tenant/invitations", invited)
        if (!(invited instanceof Error) && invited.status === 201) {
          const revoked = await api("DELETE", `/tenant/invitations/${invited.body.id}`)
          // As below: the ingress's retry of a revocation that took place finds it REVOKED.
          const revokedBefore = !(revoked instanceof Error) && revoked.status === 409 && revoked.text.includes("this one is REVOKED")
          count("members", "DELETE /tenant/invitations/{id}", revokedBefore ? "done" : revoked)
        }
      }
      const userSub = `sso|drills-${randomUUID()}`
      const email = `${userSub.slice(4)}@drills.example`
      const provisioned = await admin(cluster, "provisioning", "POST", `/admin/tenants/${fixture.slug}/sso-members`, { userSub, email }).catch((error: Error) => error)
      if (!(provisioned instanceof Error) && provisioned.status < 300) {
        const removed = await api("DELETE", `/tenant/invitations/members/${encodeURIComponent(userSub)}`)
        // The ingress retries a DELETE on the other gateway when the first died with it in flight
        // (nginx and ingress-nginx retry idempotent methods even once sent), and the retry finds
        // the member gone: 404, the contract's answer for one who is no longer a member. Taken as
        // done only once the member reads removed; a 404 for a member still there is a failure.
        const retriedAfterDone = !(removed instanceof Error) && removed.status === 404 && (await memberGone(email))
        count("members", "DELETE /tenant/invitations/members/{userSub}", retriedAfterDone ? "done" : removed)
      }
      await pause(2_000)
    }
  }

  const rolledBack = { count: 0, acknowledged: [] as Array<string> }
  const loops = [...fixture.readTokens.map(patReader), ...fixture.partners.map(partnerReader), writer(1), writer(2), rollbacks(), members()]
  return {
    takeAnswers: () => {
      const taken = answers
      answers = emptyAnswers()
      return taken
    },
    read: async (path) => count("bursts", `GET ${path} (burst)`, await get(path, fixture.readTokens[2]!)),
    totals,
    writes,
    rolledBack,
    stop: async () => {
      running = false
      await Promise.all(loops)
    }
  }
}
