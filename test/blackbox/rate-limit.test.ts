import { beforeAll, describe, expect, it } from "vitest"
import type { Reply } from "../support/http.js"
import { expectProblem, expectRateLimitHeaders } from "../support/problem.js"
import type { CreatedPat } from "../support/system.js"
import { useSystem } from "../support/useSystem.js"

// The defaults (docs/product-rules.md#rate-limiting): 180 per PAT and 60 per client address without a valid token, per minute.
const system = useSystem()

let burst: CreatedPat
let bystander: CreatedPat

const apps = "/api/v1/referentiel/applications"
const header = (reply: Reply, name: string) => Number(reply.headers.get(name))

beforeAll(async () => {
  const tenant = await system.createTenant("bb-limits")
  ;[burst, bystander] = await Promise.all([system.createPat(tenant, "read"), system.createPat(tenant, "read")])
}, 120_000)

/** Retry-After must be X-RateLimit-Reset minus now, rounded up, at least 1 (within 1 s of clock skew). */
const expectRetryAfterConsistent = (reply: Reply, receivedAtMs: number) => {
  const retryAfter = reply.headers.get("retry-after")
  expect(retryAfter).toMatch(/^\d+$/)
  const expected = Math.max(1, Math.ceil(header(reply, "x-ratelimit-reset") - receivedAtMs / 1000))
  expect(Math.abs(Number(retryAfter) - expected), `Retry-After ${retryAfter}, Reset ${reply.headers.get("x-ratelimit-reset")}`).toBeLessThanOrEqual(1)
}

describe("per-PAT sliding window", () => {
  it("counts every call of a PAT (200, 403, 404 alike) and answers the 181st within the minute with 429", async () => {
    const api = system.api(burst.token)
    const startedAtMs = Date.now()
    const replies: Array<Reply> = [
      await api.get("/referentiel/applications"),
      await api.post("/tenant/invitations", { body: { email: "someone@bb-limits.example", arbRole: "viewer" } }),
      await api.get("/nope")
    ]
    while (replies.length < 180) replies.push(await api.get("/referentiel/functions/stats"))
    const over = await api.get("/referentiel/applications")
    const receivedAtMs = Date.now()
    // The test is only meaningful if the 181 calls fell within one window.
    expect(receivedAtMs - startedAtMs, "the burst must fit in the 60 s window").toBeLessThan(55_000)

    expect(replies.map((r) => r.status)).toEqual([200, 403, 404, ...Array.from({ length: 177 }, () => 200)])
    for (const reply of replies) expectRateLimitHeaders(reply)
    expect(replies.map((r) => header(r, "x-ratelimit-limit"))).toEqual(replies.map(() => 180))
    expect(replies.map((r) => header(r, "x-ratelimit-remaining"))).toEqual(replies.map((_, i) => 179 - i))
    // The oldest counted call is the first one, so Reset stays at its time + 60 s throughout.
    const resets = new Set(replies.map((r) => header(r, "x-ratelimit-reset")))
    expect(Math.max(...resets) - Math.min(...resets)).toBeLessThanOrEqual(1)
    expect(Math.abs(header(replies[0]!, "x-ratelimit-reset") - (startedAtMs / 1000 + 60))).toBeLessThanOrEqual(2)

    expectProblem(over, "RATE_LIMITED", apps)
    expectRateLimitHeaders(over)
    expect({ limit: header(over, "x-ratelimit-limit"), remaining: header(over, "x-ratelimit-remaining") }).toEqual({ limit: 180, remaining: 0 })
    expectRetryAfterConsistent(over, receivedAtMs)

    // Still limited, whatever the path: the 182nd call is refused as well.
    const again = await api.get("/nope")
    expectProblem(again, "RATE_LIMITED", "/api/v1/nope")
    expectRetryAfterConsistent(again, Date.now())
  })

  it("limits per token: another token of the same holder is unaffected", async () => {
    const reply = await system.api(bystander.token).get("/referentiel/applications")
    expect(reply.status).toBe(200)
    expectRateLimitHeaders(reply)
    expect({ limit: header(reply, "x-ratelimit-limit"), remaining: header(reply, "x-ratelimit-remaining") }).toEqual({ limit: 180, remaining: 179 })
  })
})

describe("calls without a valid token", () => {
  it("are limited per client address: 60 answers 401, then 429, all with the rate-limit headers", async () => {
    const replies: Array<Reply> = []
    const startedAtMs = Date.now()
    for (let i = 0; i < 60; i++) {
      replies.push(await system.api(i % 2 === 0 ? undefined : "ap_pat_bogus").get("/referentiel/applications"))
    }
    const over = await system.api().get("/referentiel/applications")
    const receivedAtMs = Date.now()
    expect(receivedAtMs - startedAtMs, "the burst must fit in the 60 s window").toBeLessThan(55_000)

    for (const reply of replies) {
      expectProblem(reply, "UNAUTHENTICATED", apps)
      expectRateLimitHeaders(reply)
    }
    expect(replies.map((r) => header(r, "x-ratelimit-limit"))).toEqual(replies.map(() => 60))
    expectProblem(over, "RATE_LIMITED", apps)
    expectRateLimitHeaders(over)
    expectRetryAfterConsistent(over, receivedAtMs)
    // A token verified lately (above, more than the cache's second ago) is still looked up, and
    // counted on its own window, not the address's.
    expect((await system.api(bystander.token).get("/referentiel/applications")).status).toBe(200)
  })
})
