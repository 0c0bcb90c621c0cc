import { beforeAll, describe, expect, it } from "vitest"
import {
  ApiError,
  AuthenticationError,
  ConflictError,
  NetworkError,
  NotFoundError,
  PermissionDeniedError,
  PortfolioClient,
  RateLimitError
} from "../../libs/client-typescript/src/index.js"
import { send } from "../support/http.js"
import { memberThroughInvitation } from "../support/provisioning.js"
import { runPytest } from "../support/pytest.js"
import type { CreatedPat, CreatedTenant } from "../support/system.js"
import { useSystem } from "../support/useSystem.js"

/**
 * Both official SDKs against the real system as `npm start` runs it: every method, the errors a
 * caller meets (401, 403, 404, 409, 429), the 429 retried after Retry-After and then surfaced, and
 * the Python context manager. The per-token limit stays the product's 180 a minute: spending it is
 * how a token gets its 429.
 */
const system = useSystem({ INVITATIONS_PER_TENANT_PER_HOUR: "1000" })

let tenant: CreatedTenant
let admin: CreatedPat
let reader: CreatedPat
let limitedNow: CreatedPat
let limitedPython: CreatedPat
let limitedEarly: CreatedPat
let limitedEarlyPython: CreatedPat
let earlyBurst = { start: 0, end: 0 }
let earlyBurstPython = { start: 0, end: 0 }
let functionId = ""
let removableSub = ""

/**
 * Spends what is left of a token's window. When the window was empty or had long emptied, the token
 * answers only 429 for the next 60 s less the burst's own length; answers when the burst started and ended.
 * A refusal alone does not prove the window full: entries the gateway reserved ahead count as
 * requests, and those that lapsed unused are given back once the key has been quiet for 2 s
 * (docs/security.md, "Rate limiting across replicas"), making room a later request gets. So spent
 * means a whole batch refused, then, after 4 quiet seconds, a request refused again.
 */
const spend = async (token: string) => {
  const start = Date.now()
  const stats = () => send(`${system.baseUrl}/referentiel/functions/stats`, { token })
  for (;;) {
    const batch = await Promise.all(Array.from({ length: 30 }, stats))
    if (!batch.every((reply) => reply.status === 429)) continue
    await sleep(4_000)
    if ((await stats()).status === 429) return { start, end: Date.now() }
  }
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)))

beforeAll(async () => {
  tenant = await system.createTenant("bb-sdk")
  ;[admin, reader, limitedNow, limitedPython, limitedEarly, limitedEarlyPython] = await Promise.all([
    system.createPat(tenant, "write"),
    system.createPat(tenant, "read"),
    system.createPat(tenant, "read"),
    system.createPat(tenant, "read"),
    system.createPat(tenant, "read"),
    system.createPat(tenant, "read")
  ])
  // Spent first, so that the retry test at the end waits for less than a whole window.
  ;[earlyBurst, earlyBurstPython] = await Promise.all([spend(limitedEarly.token), spend(limitedEarlyPython.token)])

  const applications = `/admin/tenants/${tenant.id}/applications`
  const base = { status: "ACTIVE", dataClassification: "INTERNAL", criticality: "NOMINAL", rtoHours: 4 }
  await system.adminOk("referential", "PUT", `${applications}/SDK-CRM`, { ...base, name: "CRM", criticality: "MISSION_CRITICAL", dataClassification: "RESTRICTED", regulations: "DORA" })
  await system.adminOk("referential", "PUT", `${applications}/SDK-HR`, { ...base, name: "HR" })
  await system.adminOk("referential", "PUT", `${applications}/SDK-PAY`, { ...base, name: "Payments", regulations: "PCI_DSS" })
  await system.adminOk("referential", "PUT", `${applications}/SDK-OLD`, { ...base, name: "Legacy", status: "RETIRED" })
  // One change in SDK-CRM's log.
  await system.adminOk("referential", "PUT", `${applications}/SDK-CRM`, { ...base, name: "CRM", criticality: "IMPORTANT", dataClassification: "RESTRICTED", regulations: "DORA" })
  const functions = `/admin/tenants/${tenant.id}/functions`
  const root = await system.adminOk("referential", "POST", functions, { code: "SDK-SALES", name: "Sales", description: "Selling things" })
  const child = await system.adminOk("referential", "POST", functions, { code: "SDK-QUOTES", name: "Quotes", parentId: root.id })
  await system.adminOk("referential", "PUT", `${functions}/${child.id}/applications/SDK-CRM`)
  functionId = child.id
  removableSub = await memberThroughInvitation(system, admin, "leaving.viewer@bb-sdk.example", "viewer")
}, 180_000)

const sdk = (token: string, options: Partial<ConstructorParameters<typeof PortfolioClient>[0]> = {}) =>
  new PortfolioClient({ token, baseUrl: system.baseUrl, ...options })

describe("the TypeScript SDK against the real system", () => {
  it("lists ACTIVE applications by default, filters, pages, and gets one with its rate-limit headers", async () => {
    const client = sdk(reader.token)
    const active = await client.applications.list()
    expect(active.map((app) => app.code).sort()).toEqual(["SDK-CRM", "SDK-HR", "SDK-PAY"])
    expect((await client.applications.list({ status: "RETIRED" })).map((app) => app.code)).toEqual(["SDK-OLD"])
    expect((await client.applications.list({ regulation: "PCI_DSS" })).map((app) => app.code)).toEqual(["SDK-PAY"])
    expect((await client.applications.list({ dataClass: "RESTRICTED", criticality: "IMPORTANT" })).map((app) => app.code)).toEqual(["SDK-CRM"])

    const paged: Array<string> = []
    for await (const app of client.applications.list({ limit: 2 })) paged.push(app.code)
    expect(paged).toEqual(active.map((app) => app.code))

    const { data, rateLimit, requestId, response } = await client.applications.get("SDK-CRM").withResponse()
    expect(data).toMatchObject({ code: "SDK-CRM", name: "CRM", criticality: "IMPORTANT" })
    expect(response.status).toBe(200)
    expect(rateLimit?.limit).toBe(180)
    expect(rateLimit?.remaining).toBeLessThan(180)
    expect(requestId).toMatch(/\S/)

    const changes = await client.applications.changes("SDK-CRM", { limit: 10 })
    expect(changes.map((change) => [change.field, change.oldValue, change.newValue])).toContainEqual(["criticality", "MISSION_CRITICAL", "IMPORTANT"])
  })

  it("reads the function tree, its flat and POSI forms, one function, search, by application and the stats", async () => {
    const client = sdk(reader.token)
    const tree = await client.functions.tree()
    expect(tree.map((node) => node.code)).toEqual(["SDK-SALES"])
    expect(tree[0]!.children.map((node) => node.code)).toEqual(["SDK-QUOTES"])
    expect((await client.functions.flat()).map((fn) => fn.code)).toEqual(["SDK-SALES", "SDK-QUOTES"])
    const posi = await client.functions.posi()
    expect(posi[0]!.children[0]!.applications.map((app) => app.code)).toEqual(["SDK-CRM"])
    expect(await client.functions.get(functionId)).toMatchObject({ code: "SDK-QUOTES", path: ["SDK-SALES", "SDK-QUOTES"] })
    expect((await client.functions.search("quotes")).map((fn) => fn.code)).toEqual(["SDK-QUOTES"])
    expect((await client.functions.byApplication("SDK-CRM")).map((fn) => fn.code)).toEqual(["SDK-QUOTES"])
    expect(await client.functions.stats()).toMatchObject({ functionCount: 2, linkCount: 1, applicationCount: 4 })
  })

  it("invites, refuses a duplicate with ALREADY_INVITED, revokes once, lists members and removes one", async () => {
    const client = sdk(admin.token)
    const invitation = await client.invitations.create({ email: "new.architect@bb-sdk.example", arbRole: "architect" })
    expect(invitation).toMatchObject({ email: "new.architect@bb-sdk.example", arbRole: "architect", status: "PENDING" })

    const duplicate = await client.invitations.create({ email: "NEW.architect@bb-sdk.example", arbRole: "viewer" }).catch((error: unknown) => error)
    expect(duplicate).toBeInstanceOf(ConflictError)
    expect(duplicate).toBeInstanceOf(ApiError)
    expect((duplicate as ApiError).errorCode).toBe("ALREADY_INVITED")
    expect((duplicate as ApiError).status).toBe(409)

    expect((await client.invitations.list()).map((item) => item.id)).toContain(invitation.id)
    expect(await client.invitations.revoke(invitation.id)).toBeUndefined()
    const again = await client.invitations.revoke(invitation.id).catch((error: unknown) => error)
    expect(again).toBeInstanceOf(ConflictError)
    expect((again as ApiError).errorCode).toBe("INVITATION_NOT_PENDING")

    const members = await client.invitations.members()
    expect(members.map((member) => member.userSub)).toContain(removableSub)
    await client.invitations.removeMember(removableSub)
    expect((await client.invitations.members()).map((member) => member.userSub)).not.toContain(removableSub)
  })

  it("maps 401, 403 and 404 to their classes, with the problem's fields", async () => {
    const unknown = await sdk("ap_pat_000000000000000000000000000000000000").applications.list().catch((error: unknown) => error)
    expect(unknown).toBeInstanceOf(AuthenticationError)
    expect((unknown as ApiError).errorCode).toBe("UNAUTHENTICATED")

    const scope = await sdk(reader.token).invitations.create({ email: "x@bb-sdk.example", arbRole: "viewer" }).catch((error: unknown) => error)
    expect(scope).toBeInstanceOf(PermissionDeniedError)
    expect((scope as ApiError).errorCode).toBe("INSUFFICIENT_SCOPE")

    const missing = await sdk(reader.token).applications.get("NO-SUCH-APP").catch((error: unknown) => error)
    expect(missing).toBeInstanceOf(NotFoundError)
    expect(missing).toMatchObject({ status: 404, errorCode: "NOT_FOUND", instance: expect.stringContaining("/referentiel/applications/NO-SUCH-APP") })
    expect((missing as ApiError).requestId).toMatch(/\S/)
  })

  it("gives a NetworkError, not an ApiError, when nothing listens", async () => {
    const failure = await new PortfolioClient({ token: reader.token, baseUrl: "http://127.0.0.1:9/api/v1", maxRetries: 0 }).functions.stats().catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(NetworkError)
    expect(failure).not.toBeInstanceOf(ApiError)
  })

  it("surfaces a 429 at once with maxRetries 0, with Retry-After and the rate-limit headers", async () => {
    await spend(limitedNow.token)
    const limited = await sdk(limitedNow.token, { maxRetries: 0 }).functions.stats().catch((error: unknown) => error)
    expect(limited).toBeInstanceOf(RateLimitError)
    expect((limited as RateLimitError).errorCode).toBe("RATE_LIMITED")
    expect((limited as RateLimitError).retryAfter).toBeGreaterThanOrEqual(1)
    expect((limited as RateLimitError).rateLimit).toMatchObject({ limit: 180, remaining: 0 })
  })
})

describe("the Python SDK against the real system", () => {
  it("passes its live suite: every method, the errors, the 429 surfaced and the context manager", async () => {
    const env = {
      ...process.env,
      PORTFOLIO_BASE_URL: system.baseUrl,
      PORTFOLIO_WRITE_TOKEN: admin.token,
      PORTFOLIO_READ_TOKEN: reader.token,
      PORTFOLIO_APP_CODE: "SDK-CRM",
      PORTFOLIO_FUNCTION_ID: functionId,
      PORTFOLIO_OTHER_SUB: await memberThroughInvitation(system, admin, "leaving.python@bb-sdk.example", "viewer"),
      PORTFOLIO_SPENT_TOKEN: limitedPython.token
    }
    await spend(limitedPython.token)
    const run = await runPytest(["tests/blackbox/test_live.py"], env)
    expect(run.code, run.output).toBe(0)
    expect(run.output).toMatch(/\b\d+ passed\b/)
    expect(run.output).not.toMatch(/\bskipped\b|\bfailed\b|\berror\b/)
  })
})

describe("a 429 through both SDKs", () => {
  // Both wait for a burst spent at the start of the file to leave the window, side by side.
  it("is retried after Retry-After and, refused again, surfaces as a RateLimitError", async () => {
    await Promise.all([typescriptRetry(), pythonRetry()])
  }, 150_000)
})

/**
 * Before the SDK's retry goes out, the test lets the whole burst leave the window and spends it
 * again, so the real gateway refuses the retry too: the SDK must have waited, retried once, and
 * surfaced the 429. On a slow run the early burst may be leaving already: then a new token, spent
 * at once. Not the same token spent again: its window would then hold the early burst's last
 * entries, leaving within seconds and making room for the SDK's first request.
 */
const freshlySpent = async () => {
  const token = await system.createPat(tenant, "read")
  return [token, await spend(token.token)] as const
}
const typescriptRetry = async () => {
  if (Date.now() - earlyBurst.start > 50_000) [limitedEarly, earlyBurst] = await freshlySpent()
  const calls: Array<number> = []
  const answers: Array<{ at: number; status: number; retryAfter: number }> = []
  const fetchThroughSpender: typeof fetch = async (input, init) => {
    calls.push(Date.now())
    if (answers.length > 0) {
      await sleep(earlyBurst.end + 60_500 - Date.now())
      await spend(limitedEarly.token)
    }
    const response = await fetch(input, init)
    answers.push({ at: Date.now(), status: response.status, retryAfter: Number(response.headers.get("retry-after")) })
    return response
  }
  // The retry's attempt holds here up to a minute (the window leaving), inside the SDK's own timeout
  // of the attempt: 30 s by default, too short when this test comes early in the file's run.
  const failure = await sdk(limitedEarly.token, { maxRetries: 1, fetch: fetchThroughSpender, timeout: 90_000 }).functions.stats()
    .catch((error: unknown) => error)
  expect(failure).toBeInstanceOf(RateLimitError)
  expect(answers.map((answer) => answer.status)).toEqual([429, 429])
  expect(answers[0]!.retryAfter).toBeGreaterThanOrEqual(1)
  // The SDK itself waited Retry-After before asking again.
  expect(calls[1]! - answers[0]!.at).toBeGreaterThanOrEqual(answers[0]!.retryAfter * 1000 - 50)
}

/** The same with the Python SDK (libs/client-python/tests/blackbox/test_live_retry.py). */
const pythonRetry = async () => {
  if (Date.now() - earlyBurstPython.start > 50_000) [limitedEarlyPython, earlyBurstPython] = await freshlySpent()
  const env = {
    ...process.env,
    PORTFOLIO_BASE_URL: system.baseUrl,
    PORTFOLIO_RETRY_TOKEN: limitedEarlyPython.token,
    PORTFOLIO_RETRY_BURST_END_MS: String(earlyBurstPython.end)
  }
  const run = await runPytest(["tests/blackbox/test_live_retry.py"], env)
  expect(run.code, run.output).toBe(0)
  expect(run.output).toMatch(/\b1 passed\b/)
  expect(run.output).not.toMatch(/\bskipped\b|\bfailed\b|\berror\b/)
}
