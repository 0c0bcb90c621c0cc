import fc from "fast-check"
import { beforeAll, describe, expect, it } from "vitest"
import { type Reply, send } from "../support/http.js"
import { expectProblem, expectRateLimitHeaders, prefixed } from "../support/problem.js"
import { invitationsPath, inviteOk, membersPath, ssoMember } from "../support/provisioning.js"
import type { CreatedPat, CreatedTenant } from "../support/system.js"
import { useSharedSystem } from "../support/useSystem.js"

// docs/product-rules.md#lists: `limit` and `cursor` are additive; without them every list is the v1 array.
const system = useSharedSystem()

const apps = "/referentiel/applications"
const codes = Array.from({ length: 250 }, (_, i) => `PG-${String(i).padStart(3, "0")}`)
const statusOf = (i: number) => (i % 5 === 0 ? "RETIRED" : "ACTIVE")

let tenant: CreatedTenant
let other: CreatedTenant
let admin: CreatedPat
let otherAdmin: CreatedPat

/** Runs `task` on every item, `width` at a time: enough to seed quickly, not enough to swamp two cores. */
const inBatches = async <A>(items: ReadonlyArray<A>, width: number, task: (item: A) => Promise<unknown>) => {
  for (let i = 0; i < items.length; i += width) await Promise.all(items.slice(i, i + width).map(task))
}

beforeAll(async () => {
  ;[tenant, other] = await Promise.all([system.createTenant("bb-pages"), system.createTenant("bb-pages-other")])
  ;[admin, otherAdmin] = await Promise.all([system.createPat(tenant, "write"), system.createPat(other, "write")])
  const put = (t: CreatedTenant, code: string, body: Record<string, unknown>) =>
    system.adminOk("referential", "PUT", `/admin/tenants/${t.id}/applications/${code}`, body)
  await inBatches(codes.map((code, i) => ({ code, i })), 10, ({ code, i }) => put(tenant, code, { name: `App ${i}`, status: statusOf(i) }))
  await put(other, "PG-000", { name: "Other tenant's" })
  // A change log of 13 entries or more: each put changes several audited fields at once.
  for (let n = 1; n <= 4; n++) await put(tenant, "PG-001", { name: "App 1", rtoHours: n, infraCost: n, supportCost: n })

  const functions = `/admin/tenants/${tenant.id}/functions`
  for (const root of ["F1", "F2", "F3"]) {
    const parent = await system.adminOk("referential", "POST", functions, { code: root, name: `Function ${root}` })
    for (const leaf of ["c", "a", "b", "d"]) {
      const child = await system.adminOk("referential", "POST", functions, { code: `${root}-${leaf}`, name: `Leaf ${leaf}`, parentId: parent.id })
      await system.adminOk("referential", "PUT", `${functions}/${child.id}/applications/PG-002`)
    }
  }
  await inBatches(Array.from({ length: 12 }, (_, i) => i), 4, (i) => inviteOk(system, admin, `invitee-${i}@bb-pages.example`, "viewer"))
  await inBatches(Array.from({ length: 6 }, (_, i) => i), 3, (i) => ssoMember(system, tenant, `oidc|pages-${i}`, `sso-${i}@bb-pages.example`, "viewer"))
}, 240_000)

const get = (path: string, pat: CreatedPat = admin) => send(`${system.baseUrl}${path}`, { token: pat.token })

/** The reference of `Link: <...>; rel="next"`, or undefined without one. */
const nextOf = (reply: Reply) => {
  const link = reply.headers.get("link")
  if (link === null) return undefined
  const match = /^<([^>]+)>; rel="next"$/.exec(link)
  expect(match, `Link: ${link}`).not.toBeNull()
  return match![1]!
}

/** Every page from `path` on, each fetched at the Link of the one before, resolved against the URL called. */
const follow = async (path: string, pat: CreatedPat = admin) => {
  const pages: Array<{ url: string; reply: Reply }> = []
  let url: string | undefined = `${system.baseUrl}${path}`
  while (url !== undefined) {
    const reply = await send(url, { token: pat.token })
    expect({ url, status: reply.status, text: reply.status === 200 ? "" : reply.text }).toEqual({ url, status: 200, text: "" })
    expectRateLimitHeaders(reply)
    pages.push({ url, reply })
    const next = nextOf(reply)
    url = next === undefined ? undefined : new URL(next, url).href
    expect(pages.length, "pages followed").toBeLessThan(60)
  }
  return { pages, items: pages.flatMap(({ reply }) => reply.body as Array<any>) }
}

const whole = async (path: string) => {
  const reply = await get(path)
  expect({ status: reply.status, link: reply.headers.get("link") }).toEqual({ status: 200, link: null })
  return reply.body as Array<any>
}

describe("applications, 250 of them", () => {
  it("answers the whole v1 array without limit or cursor, and no Link", async () => {
    const list = await whole(apps)
    expect(list.map((app) => app.code)).toEqual(codes)
  })

  it("pages through limit=100 following the Link to the end: the v1 list's items, in order, no duplicate, no gap", async () => {
    const v1 = await whole(apps)
    const { items, pages } = await follow(`${apps}?limit=100`)
    expect(pages.map(({ reply }) => reply.body.length)).toEqual([100, 100, 50])
    expect(items).toEqual(v1)
    expect(new Set(items.map((app) => app.code)).size).toBe(250)
    // Each Link repeats the request's parameters and ends in the next cursor; the last page has none.
    expect(pages[1]!.url).toMatch(new RegExp(`/api/v1${apps}\\?limit=100&cursor=[A-Za-z0-9_-]+$`))
    expect(pages.at(-1)!.reply.headers.get("link")).toBeNull()
    expect(JSON.parse(pages[0]!.reply.text)).toEqual(v1.slice(0, 100))
  })

  it("keeps a filter in every Link and pages exactly the filtered v1 list", async () => {
    const v1 = await whole(`${apps}?status=ACTIVE`)
    expect(v1).toHaveLength(200)
    const { items, pages } = await follow(`${apps}?status=ACTIVE&limit=64`)
    expect(pages).toHaveLength(4)
    for (const { url } of pages.slice(1)) expect(new URL(url).searchParams.get("status")).toBe("ACTIVE")
    expect(items).toEqual(v1)
  })

  it("takes pages of 100 for a cursor alone, and caps a limit above 1000 instead of refusing it", async () => {
    const first = await get(`${apps}?limit=10`)
    const cursor = new URL(nextOf(first)!, "http://x/").searchParams.get("cursor")!
    const alone = await get(`${apps}?cursor=${cursor}`)
    expect(alone.body.map((app: any) => app.code)).toEqual(codes.slice(10, 110))
    expect(nextOf(alone)).toMatch(/^applications\?cursor=[A-Za-z0-9_-]+$/)
    const capped = await get(`${apps}?limit=5000`)
    expect({ status: capped.status, count: capped.body.length, link: capped.headers.get("link") }).toEqual({ status: 200, count: 250, link: null })
  })

  it("does not shift the next page when an application is created before the cursor's place", async () => {
    const first = await get(`${apps}?limit=100`)
    await system.adminOk("referential", "PUT", `/admin/tenants/${tenant.id}/applications/PG-000a`, { name: "Created between two pages" })
    const second = await send(new URL(nextOf(first)!, `${system.baseUrl}${apps}?limit=100`).href, { token: admin.token })
    expect(second.body.map((app: any) => app.code)).toEqual(codes.slice(100, 200))
    expect((await whole(apps)).map((app) => app.code)).toContain("PG-000a")
  })
})

describe("every other list", () => {
  const lists = [
    `${apps}/PG-001/changes`,
    "/referentiel/functions/flat",
    "/referentiel/functions/search?q=leaf",
    "/referentiel/functions/by-application/PG-002",
    invitationsPath,
    membersPath
  ]

  it.each(lists)("pages %s to exactly its v1 list, and answers no Link without limit", async (path) => {
    const v1 = await whole(path)
    expect(v1.length).toBeGreaterThanOrEqual(7)
    const { items, pages } = await follow(`${path}${path.includes("?") ? "&" : "?"}limit=3`)
    expect(pages.length).toBe(Math.ceil(v1.length / 3))
    expect(items).toEqual(v1)
  })

  it("keeps the change log's own default of 50 and its cap of 200", async () => {
    const log = await whole(`${apps}/PG-001/changes`)
    expect((await get(`${apps}/PG-001/changes?limit=9999`)).body).toEqual(log)
    const first = await get(`${apps}/PG-001/changes?limit=2`)
    expect(first.body).toEqual(log.slice(0, 2))
    expect(nextOf(first)).toMatch(/^changes\?limit=2&cursor=/)
  })
})

describe("refusals", () => {
  const lists = [apps, `${apps}/PG-001/changes`, "/referentiel/functions/flat", "/referentiel/functions/search?q=leaf", invitationsPath, membersPath]
  const withQuery = (path: string, query: string) => `${path}${path.includes("?") ? "&" : "?"}${query}`
  const pathOf = (path: string) => prefixed(path.split("?")[0]!)

  it.each(lists)("refuses limit=0, -1, abc, 1.5 and an empty one on %s with 400 INVALID_REQUEST", async (path) => {
    for (const limit of ["0", "-1", "abc", "1.5", ""]) {
      const reply = await get(withQuery(path, `limit=${limit}`))
      expectProblem(reply, "INVALID_REQUEST", pathOf(path))
      expect(reply.headers.get("link")).toBeNull()
    }
  })

  it.each(lists)("refuses a cursor that does not decode on %s with 400 'invalid cursor'", async (path) => {
    for (const cursor of ["garbage", "eyJ2IjoxfQ", "", "%F0%9F%98%80"]) {
      const reply = await get(withQuery(path, `cursor=${cursor}`))
      expectProblem(reply, "INVALID_REQUEST", pathOf(path))
      expect(reply.body.detail).toMatch(/^invalid cursor/)
    }
  })

  it("refuses a cursor of other filters, of another list or of another tenant", async () => {
    const next = (reply: Reply) => new URL(nextOf(reply)!, "http://x/").searchParams.get("cursor")!
    const active = next(await get(`${apps}?status=ACTIVE&limit=5`))
    const invitations = next(await get(`${invitationsPath}?limit=2`))
    for (
      const [path, pat] of [
        [`${apps}?status=RETIRED&cursor=${active}`, admin],
        [`${apps}?cursor=${active}`, admin],
        [`${apps}?status=ACTIVE&cursor=${active}`, otherAdmin],
        [`${apps}?cursor=${invitations}`, admin],
        [`${membersPath}?cursor=${invitations}`, admin],
        [`${invitationsPath}?cursor=${invitations}`, otherAdmin]
      ] as const
    ) {
      const reply = await get(path, pat)
      expectProblem(reply, "INVALID_REQUEST", pathOf(path))
      expect(reply.body.detail, path).toMatch(/^invalid cursor/)
    }
    // The same cursor still serves its own list: a refusal changed nothing.
    expect((await get(`${apps}?status=ACTIVE&cursor=${active}`)).status).toBe(200)
  })

  it("answers a cursor forged with any key in a real cursor's envelope with a page or a 400, never a 5xx", async () => {
    const text = fc.oneof(fc.string({ maxLength: 30 }), fc.string({ unit: "binary", maxLength: 10 }), fc.constantFrom("\u0000", "a\u0000b", "'; --"))
    const number = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(-1, 0, 253_402_300_799_999, 253_402_300_800_000, 1e300))
    const key = fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.tuple(number, fc.oneof(text, fc.uuid())), fc.array(text, { maxLength: 4 }), text)
    for (const path of [...lists, "/referentiel/functions/by-application/PG-002"]) {
      const first = await get(withQuery(path, "limit=1"))
      const envelope = JSON.parse(Buffer.from(new URL(nextOf(first)!, "http://x/").searchParams.get("cursor")!, "base64url").toString("utf8"))
      await fc.assert(
        fc.asyncProperty(key, async (k) => {
          const reply = await get(withQuery(path, `cursor=${Buffer.from(JSON.stringify({ ...envelope, k })).toString("base64url")}`))
          if (reply.status === 200) expect(Array.isArray(reply.body), path).toBe(true)
          else expectProblem(reply, "INVALID_REQUEST", pathOf(path))
        }),
        { numRuns: 15 }
      )
    }
  })
})
