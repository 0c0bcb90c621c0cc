import { describe, expect, it } from "vitest"
import { nextPageUrl } from "../src/api-promise.js"
import { NotFoundError, PortfolioError } from "../src/index.js"
import { fakeFetch, instantClient, json, problem, rejection } from "./support.js"

const next = (reference: string) => ({ link: `<${reference}>; rel="next"` })
const collect = async <T>(items: AsyncIterable<T>) => {
  const all: Array<T> = []
  for await (const item of items) all.push(item)
  return all
}

describe("auto-pagination", () => {
  it("follows each relative Link until none comes back, keeping the filters", async () => {
    const { fetch, requests } = fakeFetch(
      json([{ code: "A" }, { code: "B" }], 200, next("?status=RETIRED&limit=2&cursor=c1")),
      json([{ code: "C" }, { code: "D" }], 200, next("applications?status=RETIRED&limit=2&cursor=c2")),
      json([{ code: "E" }])
    )
    const codes = (await collect(instantClient(fetch).applications.list({ status: "RETIRED", limit: 2 }))).map((app) => app.code)
    expect(codes).toEqual(["A", "B", "C", "D", "E"])
    expect(requests.map((request) => request.url.href)).toEqual([
      "https://api.example.test/api/v1/referentiel/applications?status=RETIRED&limit=2",
      "https://api.example.test/api/v1/referentiel/applications?status=RETIRED&limit=2&cursor=c1",
      "https://api.example.test/api/v1/referentiel/applications?status=RETIRED&limit=2&cursor=c2"
    ])
    expect(requests.every((request) => request.headers.authorization === "Bearer ap_pat_test")).toBe(true)
  })

  it("resolves a reference against the URL of the page that gave it, under a base path", async () => {
    const { fetch, requests } = fakeFetch(json([1], 200, next("changes?limit=1&cursor=x")), json([2], 200, next("/api/v1/referentiel/applications/CRM-01/changes?limit=1&cursor=y")), json([3]))
    expect(await collect(instantClient(fetch).applications.changes("CRM-01", { limit: 1 }))).toEqual([1, 2, 3])
    expect(requests.map((request) => `${request.url.pathname}${request.url.search}`)).toEqual([
      "/api/v1/referentiel/applications/CRM-01/changes?limit=1",
      "/api/v1/referentiel/applications/CRM-01/changes?limit=1&cursor=x",
      "/api/v1/referentiel/applications/CRM-01/changes?limit=1&cursor=y"
    ])
  })

  it("gives the first page when awaited, and reuses it when iterated", async () => {
    const { fetch, requests } = fakeFetch(json([1, 2], 200, next("?limit=2&cursor=n")), json([3]))
    const promise = instantClient(fetch).functions.flat({ limit: 2 })
    expect(await promise).toEqual([1, 2])
    expect(requests).toHaveLength(1)
    expect(await collect(promise)).toEqual([1, 2, 3])
    expect(requests).toHaveLength(2)
  })

  it("iterates a whole list answered at once in one request", async () => {
    const { fetch, requests } = fakeFetch(json([{ userSub: "a" }, { userSub: "b" }]))
    expect(await collect(instantClient(fetch).invitations.members())).toEqual([{ userSub: "a" }, { userSub: "b" }])
    expect(requests).toHaveLength(1)
  })

  it("works for every list method", async () => {
    const lists: Array<(client: ReturnType<typeof instantClient>) => AsyncIterable<unknown>> = [
      (c) => c.applications.list({ limit: 1 }),
      (c) => c.applications.changes("A", { limit: 1 }),
      (c) => c.functions.flat({ limit: 1 }),
      (c) => c.functions.search("q", { limit: 1 }),
      (c) => c.functions.byApplication("A", { limit: 1 }),
      (c) => c.invitations.list({ limit: 1 }),
      (c) => c.invitations.members({ limit: 1 })
    ]
    for (const list of lists) {
      const { fetch, requests } = fakeFetch(json(["first"], 200, next("?limit=1&cursor=2")), json(["second"]))
      expect(await collect(list(instantClient(fetch)))).toEqual(["first", "second"])
      expect(requests[1]!.url.searchParams.get("cursor")).toBe("2")
    }
  })

  it("picks the next link among several, whatever the parameters' order and case", async () => {
    const link = '<?cursor=prev>; rel="prev", <?cursor=last>; title="last"; rel=last, <?cursor=n2>; title="x"; REL="next last"'
    expect(nextPageUrl(link, "https://h.test/api/v1/x?limit=1")).toBe("https://h.test/api/v1/x?cursor=n2")
    expect(nextPageUrl('<?cursor=prev>; rel="prev"', "https://h.test/api/v1/x")).toBeNull()
    expect(nextPageUrl(null, "https://h.test/api/v1/x")).toBeNull()
  })

  it("reads parameters whole: a quoted value holding '; rel=next' is not a relation", () => {
    const base = "https://h.test/api/v1/x?limit=1"
    expect(nextPageUrl('<?cursor=p>; title="back; rel=next"; rel=prev, <?cursor=n>; rel="next"', base)).toBe("https://h.test/api/v1/x?cursor=n")
    expect(nextPageUrl('<?cursor=n>; title="page 2; rel=last"; rel="next"', base)).toBe("https://h.test/api/v1/x?cursor=n")
    expect(nextPageUrl('<?cursor=p>; title="a, <?cursor=q>; rel=next"; rel=prev', base)).toBeNull()
    expect(nextPageUrl("<https://h.test/api/v1/x?cursor=abs>;rel=next", base)).toBe("https://h.test/api/v1/x?cursor=abs")
  })

  it("stops with an error, instead of looping for ever, when a next link leads back to a page already read", async () => {
    for (const links of [["?limit=1"], ["?limit=1&cursor=2", "?limit=1&cursor=2"], ["?limit=1&cursor=2", "?limit=1&cursor=3", "?limit=1&cursor=2"]]) {
      const answers = links.map((reference, index) => json([index], 200, next(reference)))
      const { fetch, requests } = fakeFetch(...answers, json(["never"]))
      const seen: Array<unknown> = []
      const error = await rejection(
        (async () => {
          for await (const item of instantClient(fetch).functions.flat({ limit: 1 })) seen.push(item)
        })()
      )
      expect(error.constructor).toBe(PortfolioError)
      expect(error.message).toMatch(/leads back to a page already read/)
      expect(requests).toHaveLength(links.length)
      expect(seen).toEqual(links.map((_, index) => index))
    }
  })

  it("refuses a page that is not a JSON array, instead of iterating an object or a string", async () => {
    for (const answer of [json({ code: "A" }), json("AB"), new Response(null, { status: 200 })]) {
      const { fetch } = fakeFetch(answer)
      const error = await rejection(collect(instantClient(fetch).functions.flat({ limit: 2 })))
      expect(error.constructor).toBe(PortfolioError)
      expect(error.message).toMatch(/where a JSON array was expected/)
    }
  })

  it("follows links under a base URL written with capitals or its default port", async () => {
    for (const baseUrl of ["https://API.Example.TEST/api/v1", "https://api.example.test:443/api/v1/"]) {
      const { fetch, requests } = fakeFetch(json([1], 200, next("?limit=1&cursor=2")), json([2]))
      expect(await collect(instantClient(fetch, { baseUrl }).functions.flat({ limit: 1 }))).toEqual([1, 2])
      expect(requests[1]!.url.href).toBe("https://api.example.test/api/v1/referentiel/functions/flat?limit=1&cursor=2")
    }
  })

  it("surfaces the error of a later page in the loop", async () => {
    const { fetch } = fakeFetch(json([1], 200, next("?limit=1&cursor=gone")), problem(404, "NOT_FOUND"))
    const seen: Array<unknown> = []
    const error = await rejection(
      (async () => {
        for await (const item of instantClient(fetch, { maxRetries: 0 }).functions.flat({ limit: 1 })) seen.push(item)
      })()
    )
    expect(seen).toEqual([1])
    expect(error).toBeInstanceOf(NotFoundError)
  })

  it("retries a page like any request", async () => {
    const { fetch, requests } = fakeFetch(json([1], 200, next("?limit=1&cursor=2")), problem(429, "RATE_LIMITED", { "retry-after": "3" }), json([2]))
    const client = instantClient(fetch)
    expect(await collect(client.functions.flat({ limit: 1 }))).toEqual([1, 2])
    expect(requests).toHaveLength(3)
    expect(client.sleeps).toEqual([3000])
  })

  it("refuses to send the token to a next link outside the base URL", async () => {
    for (const reference of ["https://elsewhere.example/api/v1/referentiel/functions/flat?cursor=2", "/other/referentiel/functions/flat?cursor=2", "//elsewhere.example/x"]) {
      const { fetch, requests } = fakeFetch(json([1], 200, next(reference)), json([2]))
      const error = await rejection(collect(instantClient(fetch).functions.flat({ limit: 1 })))
      expect(error.constructor).toBe(PortfolioError)
      expect(error.message).toMatch(/outside https:\/\/api\.example\.test\/api\/v1/)
      expect(requests).toHaveLength(1)
    }
  })

  it("can stop early without loading further pages", async () => {
    const { fetch, requests } = fakeFetch(json([{ code: "A" }, { code: "B" }], 200, next("?limit=2&cursor=n")), json([{ code: "C" }]))
    for await (const item of instantClient(fetch).functions.flat({ limit: 2 })) if (item.code === "A") break
    expect(requests).toHaveLength(1)
  })
})
