import { generateKeyPairSync } from "node:crypto"
import http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startSecondGateway } from "../support/assertionReplay.js"
import type { CreatedTenant } from "../support/system.js"
import { useSharedSystem } from "../support/useSystem.js"

// Partner access across real gateway processes. OAUTH_SIGNING_KEYS rotated while a partner keeps asking for tokens
// and calling the API through whichever replica a load balancer picks (docs/product-rules.md,
// "Key rotation without a failed request"): publish the new key, then sign with it. Each step is a
// rolling update of two replicas, a new process started and ready before an old one leaves the
// pool. The last step (dropping the old key once its tokens have expired, 5 minutes later) is
// checked on a timeline in services/gateway/test/unit/PartnerTokens.test.ts. And the partner's
// 600 requests a minute, counted once for the cluster whichever replica answers.
const system = useSharedSystem()

type Jwk = Record<string, string>
const es256 = (kid: string): Jwk => {
  const jwk = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ format: "jwk" })
  return { kid, kty: "EC", crv: "P-256", x: jwk.x!, y: jwk.y!, d: jwk.d! }
}
const ed25519 = (kid: string): Jwk => {
  const jwk = generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" })
  return { kid, kty: "OKP", crv: "Ed25519", x: jwk.x!, d: jwk.d! }
}

type Replica = Awaited<ReturnType<typeof startSecondGateway>>

let tenant: CreatedTenant
let client: { client_id: string; client_secret: string }
const started: Array<Replica> = []

beforeAll(async () => {
  tenant = await system.createTenant("bb-rotation")
  await system.putApplication(tenant, { code: "APP-R", name: "Read during the rotation", status: "ACTIVE" })
  client = await system.cliJson(["partner", "create", "--tenant", tenant.slug, "--name", "bb-rotation", "--scope", "read"])
}, 60_000)

afterAll(async () => {
  await Promise.all(started.map((replica) => replica.stop()))
}, 60_000)

const replicaWith = async (keys: ReadonlyArray<Jwk>, partnerLimit = "100000") => {
  const replica = await startSecondGateway(
    {
      ...system.env,
      OAUTH_SIGNING_KEYS: JSON.stringify(keys),
      // Every replica of one deployment publishes the same base: the tokens' issuer and audience.
      PUBLIC_BASE_URL: "http://portfolio.test/api/v1",
      LOG_LEVEL: "Warn",
      // The two replicas these tests run, and the exact path only: with the default 300 ms, a
      // bucket slow to answer on the CI's loaded cores sent a request to degraded mode, which counts
      // in the replica alone (tested in RateLimitDegraded.test.ts) and admitted 603 of a limit of 600.
      GATEWAY_REPLICAS: "2",
      RATE_LIMIT_STORE_TIMEOUT: "10 seconds",
      PARTNER_RATE_LIMIT_PER_MINUTE: partnerLimit,
      UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE: "100000"
    },
    { referential: system.system.serviceUrls.referential, provisioning: system.system.serviceUrls.provisioning }
  )
  started.push(replica)
  return replica
}

/** One request on a connection of its own, so that a replica leaving closes no connection a request was about to reuse. */
const call = (url: string, options: { readonly method?: string; readonly headers?: Record<string, string>; readonly body?: string } = {}) =>
  new Promise<{ status: number; text: string }>((resolve) => {
    const request = http.request(url, { method: options.method ?? "GET", headers: options.headers ?? {}, agent: false }, (response) => {
      let text = ""
      response.setEncoding("utf8").on("data", (chunk: string) => (text += chunk))
      response.on("end", () => resolve({ status: response.statusCode ?? 0, text }))
    })
    request.on("error", (error) => resolve({ status: 0, text: String(error) }))
    request.end(options.body)
  })

/** A client-credentials token from one replica, the client authenticated by HTTP Basic. */
const requestToken = (replica: Replica, partner: { readonly client_id: string; readonly client_secret: string }) =>
  call(`${replica.baseUrl}/oauth/token`, {
    method: "POST",
    headers: {
      authorization: `Basic ${Buffer.from(`${partner.client_id}:${partner.client_secret}`).toString("base64")}`,
      "content-type": "application/x-www-form-urlencoded"
    },
    body: "grant_type=client_credentials"
  })

const kidOf = (token: string) => JSON.parse(Buffer.from(token.split(".")[0]!, "base64url").toString()).kid as string

/**
 * Partner traffic through a pool of replicas, until stopped: each of `loops` callers takes a token
 * from a random replica, then reads the referential through random replicas with it.
 */
const traffic = (pool: Array<Replica>, loops = 3) => {
  const failures: Array<string> = []
  const kids = new Set<string>()
  let calls = 0
  let running = true
  const pick = () => pool[Math.floor(Math.random() * pool.length)]!
  const loop = async () => {
    while (running) {
      const issuer = pick()
      const issued = await requestToken(issuer, client)
      if (issued.status !== 200) {
        failures.push(`token from ${issuer.url}: ${issued.status} ${issued.text}`)
        continue
      }
      const token = JSON.parse(issued.text).access_token as string
      kids.add(kidOf(token))
      for (let i = 0; i < 5 && running; i++) {
        const reader = pick()
        const read = await call(`${reader.baseUrl}/referentiel/applications`, { headers: { authorization: `Bearer ${token}` } })
        calls++
        if (read.status !== 200) failures.push(`read on ${reader.url} with a token of ${kidOf(token)}: ${read.status} ${read.text}`)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    }
  }
  const loopsDone = Promise.all(Array.from({ length: loops }, loop))
  return {
    failures,
    kids,
    calls: () => calls,
    stop: async () => {
      running = false
      await loopsDone
    }
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Replaces each replica of the pool in turn by one of `keys`: started and ready, in the pool, then the old one out and stopped. */
const rollTo = async (pool: Array<Replica>, keys: ReadonlyArray<Jwk>) => {
  for (let slot = 0; slot < pool.length; slot++) {
    const next = await replicaWith(keys)
    const previous = pool[slot]!
    pool[slot] = next
    // Requests already sent to the previous one end before it stops (a graceful shutdown).
    await pause(1_500)
    await previous.stop()
    await pause(1_500)
  }
}

describe("OAuth signing keys rotated across live gateway replicas", () => {
  it("publish, then sign: no request fails while tokens of both keys are in flight", async () => {
    const a = es256("rotation-a")
    const b = ed25519("rotation-b")
    const pool = [await replicaWith([a]), await replicaWith([a])]
    const load = traffic(pool)
    await pause(2_000)
    await rollTo(pool, [a, b])
    await rollTo(pool, [b, a])
    await pause(2_000)
    await load.stop()
    console.log(`key rotation across live replicas: ${load.calls()} reads, ${load.failures.length} failed`)
    expect(load.failures).toEqual([])
    expect(load.calls()).toBeGreaterThan(100)
    // Tokens of both keys were used, by the same replicas: the overlap was real.
    expect([...load.kids].sort()).toEqual(["rotation-a", "rotation-b"])
    await Promise.all(pool.map((replica) => replica.stop()))
    // Six gateway starts and four graceful stops: 50 s alone here, over 120 s beside two other
    // black-box files on 2 busy cores. Nothing in it is timed; the bound only catches a hang.
  }, 300_000)

  it("the same check fails a rotation that signs with a key some replica does not know yet", async () => {
    const a = es256("skipped-a")
    const b = ed25519("skipped-b")
    const pool = [await replicaWith([a]), await replicaWith([a])]
    const load = traffic(pool)
    await pause(1_000)
    await rollTo(pool, [b, a])
    await load.stop()
    console.log(`a rotation that skips the publication: ${load.calls()} reads, ${load.failures.length} failed`)
    expect(load.failures.some((failure) => failure.includes("with a token of skipped-b: 401"))).toBe(true)
    await Promise.all(pool.map((replica) => replica.stop()))
  }, 120_000)
})

describe("a partner's limit across live gateway replicas", () => {
  it("admits 600 requests a minute per partner client in all, whichever replica answers, then 429", async () => {
    const key = es256("limit-key")
    const replicas = [await replicaWith([key], "600"), await replicaWith([key], "600")]
    const limited = await system.cliJson(["partner", "create", "--tenant", tenant.slug, "--name", "bb-limited", "--scope", "read"])
    const issued = await requestToken(replicas[0]!, limited)
    expect(issued.status).toBe(200)
    const token = JSON.parse(issued.text).access_token as string
    // 700 reads, alternating between the replicas, four at a time.
    const statuses: Array<number> = []
    let next = 0
    await Promise.all(Array.from({ length: 4 }, async () => {
      while (next < 700) {
        const i = next++
        const read = await call(`${replicas[i % 2]!.baseUrl}/referentiel/applications`, { headers: { authorization: `Bearer ${token}` } })
        statuses.push(read.status)
      }
    }))
    const admitted = statuses.filter((status) => status === 200).length
    console.log(`partner limit across two replicas: ${admitted} of 700 admitted, ${statuses.filter((s) => s === 429).length} refused 429`)
    expect(statuses.filter((status) => status !== 200 && status !== 429)).toEqual([])
    // Exact only while every request was counted in the bucket: none in degraded mode.
    expect(replicas.flatMap((replica) => replica.logs().filter((line) => line.includes("rate limit degraded")))).toEqual([])
    expect(admitted).toBe(600)
    const refused = await call(`${replicas[1]!.baseUrl}/referentiel/applications`, { headers: { authorization: `Bearer ${token}` } })
    expect(refused.status).toBe(429)
    await Promise.all(replicas.map((replica) => replica.stop()))
  }, 120_000)
})
