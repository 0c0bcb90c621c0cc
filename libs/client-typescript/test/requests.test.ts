import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { ApiPromise, PagePromise, PortfolioClient, VERSION } from "../src/index.js"
import { baseUrl, fakeFetch, instantClient, json, noContent, rateLimitHeaders, rejection } from "./support.js"

const app = { code: "CRM-01", name: "CRM" }
const fn = { id: "7d3c2f4e-0b1a-4c5d-9e8f-1a2b3c4d5e6f", code: "F-SALES" }
const invitation = { id: "3f2e1d0c-bbaa-4998-8776-655443322110", email: "a@corp.example", arbRole: "architect" }

/** Calls `call` on a client whose fetch answers `answer`, and gives the one request it sent and the result. */
const send = async (call: (client: PortfolioClient) => PromiseLike<unknown>, answer: Response = json([])) => {
  const { fetch, requests } = fakeFetch(answer)
  const result = await call(instantClient(fetch))
  expect(requests).toHaveLength(1)
  const request = requests[0]!
  return { request, path: request.url.pathname.replace(/^\/api\/v1/, ""), query: Object.fromEntries(request.url.searchParams), result }
}

describe("the request of every method", () => {
  it("applications.list sends status=ACTIVE by default, every filter under its wire name, and page parameters", async () => {
    const plain = await send((client) => client.applications.list(), json([app]))
    expect(plain).toMatchObject({ path: "/referentiel/applications", query: { status: "ACTIVE" }, result: [app] })
    expect(plain.request.method).toBe("GET")

    const filtered = await send((client) =>
      client.applications.list({ dataClass: "CONFIDENTIAL", criticality: "LOW", regulation: "HDS", status: "RETIRED", limit: 25, cursor: "abc" })
    )
    expect(filtered.query).toEqual({ data_class: "CONFIDENTIAL", criticality: "LOW", regulation: "HDS", status: "RETIRED", limit: "25", cursor: "abc" })
  })

  it("omits query parameters given as undefined", async () => {
    const { query } = await send((client) => client.applications.list({ dataClass: undefined, regulation: "DORA", limit: undefined }))
    expect(query).toEqual({ regulation: "DORA", status: "ACTIVE" })
  })

  it("applications.get and applications.changes put the percent-encoded code in the path", async () => {
    const get = await send((client) => client.applications.get("CRM-01"), json(app))
    expect(get).toMatchObject({ path: "/referentiel/applications/CRM-01", query: {}, result: app })
    const encoded = await send((client) => client.applications.get("a b/c?d#e%f"), json(app))
    expect(encoded.request.url.href).toBe(`${baseUrl}/referentiel/applications/a%20b%2Fc%3Fd%23e%25f`)

    const changes = await send((client) => client.applications.changes("CRM 01", { limit: 10, cursor: "n" }))
    expect(changes).toMatchObject({ path: "/referentiel/applications/CRM%2001/changes", query: { limit: "10", cursor: "n" } })
    expect((await send((client) => client.applications.changes("CRM-01"))).query).toEqual({})
  })

  it("functions.tree, posi and stats take no parameter", async () => {
    expect(await send((client) => client.functions.tree(), json([fn]))).toMatchObject({ path: "/referentiel/functions", query: {}, result: [fn] })
    expect(await send((client) => client.functions.posi())).toMatchObject({ path: "/referentiel/functions/posi", query: {} })
    const stats = { functionCount: 2 }
    expect(await send((client) => client.functions.stats(), json(stats))).toMatchObject({ path: "/referentiel/functions/stats", query: {}, result: stats })
  })

  it("functions.flat, search, byApplication and get", async () => {
    expect(await send((client) => client.functions.flat({ limit: 3 }))).toMatchObject({ path: "/referentiel/functions/flat", query: { limit: "3" } })
    expect(await send((client) => client.functions.search("quotes & sales", { cursor: "c" }))).toMatchObject({
      path: "/referentiel/functions/search",
      query: { q: "quotes & sales", cursor: "c" }
    })
    expect(await send((client) => client.functions.byApplication("CRM/01", { limit: 1 }))).toMatchObject({
      path: "/referentiel/functions/by-application/CRM%2F01",
      query: { limit: "1" }
    })
    expect(await send((client) => client.functions.get(fn.id), json(fn))).toMatchObject({ path: `/referentiel/functions/${fn.id}`, result: fn })
  })

  it("invitations.create POSTs the JSON body with its content type and answers the 201's invitation", async () => {
    const { request, path, query, result } = await send(
      (client) => client.invitations.create({ email: "a@corp.example", arbRole: "architect" }),
      json(invitation, 201)
    )
    expect(request.method).toBe("POST")
    expect({ path, query }).toEqual({ path: "/tenant/invitations", query: {} })
    expect(request.body).toEqual({ email: "a@corp.example", arbRole: "architect" })
    expect(request.headers["content-type"]).toBe("application/json")
    expect(result).toEqual(invitation)
  })

  it("sends no body and no content type with a GET", async () => {
    const { request } = await send((client) => client.invitations.list())
    expect(request.body).toBeNull()
    expect(request.headers).not.toHaveProperty("content-type")
  })

  it("invitations.list and members page like every list", async () => {
    expect(await send((client) => client.invitations.list({ limit: 20 }))).toMatchObject({ path: "/tenant/invitations", query: { limit: "20" } })
    expect(await send((client) => client.invitations.members({ cursor: "x" }))).toMatchObject({ path: "/tenant/invitations/members", query: { cursor: "x" } })
  })

  it("invitations.revoke and removeMember DELETE and answer undefined on 204", async () => {
    const revoke = await send((client) => client.invitations.revoke(invitation.id), noContent())
    expect(revoke).toMatchObject({ path: `/tenant/invitations/${invitation.id}`, query: {} })
    expect(revoke.request.method).toBe("DELETE")
    expect(revoke.result).toBeUndefined()
    const remove = await send((client) => client.invitations.removeMember("auth0|5f1e"), noContent())
    expect(remove.path).toBe("/tenant/invitations/members/auth0%7C5f1e")
    expect(remove.request.method).toBe("DELETE")
    expect(remove.result).toBeUndefined()
  })

  it("rejects an empty path parameter, which would address another endpoint, without sending anything", async () => {
    const { fetch, requests } = fakeFetch()
    const client = instantClient(fetch)
    await expect(client.applications.get("")).rejects.toThrow(TypeError)
    await expect(client.invitations.removeMember("")).rejects.toThrow(/userSub/)
    await expect(client.functions.byApplication("")).rejects.toThrow(/code/)
    expect(requests).toHaveLength(0)
  })

  it("rejects a path parameter . or .., which the URL parser would resolve into another endpoint, without sending anything", async () => {
    const { fetch, requests } = fakeFetch()
    const client = instantClient(fetch)
    for (const segment of [".", ".."]) {
      await expect(client.applications.get(segment)).rejects.toThrow(TypeError)
      await expect(client.functions.byApplication(segment)).rejects.toThrow(/`code` cannot be/)
      await expect(client.invitations.revoke(segment)).rejects.toThrow(/`id` cannot be/)
      await expect(client.invitations.removeMember(segment)).rejects.toThrow(/`userSub` cannot be/)
    }
    expect(requests).toHaveLength(0)
    const dotted = await send((client) => client.applications.get("..."), json(app))
    expect(dotted.path).toBe("/referentiel/applications/...")
  })

  it("returns an ApiPromise from every single-result method and a PagePromise from every list", () => {
    const client = instantClient(fakeFetch(...Array.from({ length: 15 }, () => json([]))).fetch)
    for (const promise of [client.applications.get("A"), client.functions.tree(), client.functions.posi(), client.functions.stats(), client.functions.get("x")]) {
      expect(promise).toBeInstanceOf(ApiPromise)
      expect(promise).not.toBeInstanceOf(PagePromise)
    }
    for (const promise of [
      client.applications.list(),
      client.applications.changes("A"),
      client.functions.flat(),
      client.functions.search("q"),
      client.functions.byApplication("A"),
      client.invitations.list(),
      client.invitations.members()
    ]) {
      expect(promise).toBeInstanceOf(PagePromise)
      expect(promise).toBeInstanceOf(Promise)
    }
  })
})

describe("headers and base URL", () => {
  it("sends the token, the SDK's User-Agent and Accept on every request", async () => {
    const { request } = await send((client) => client.functions.tree())
    expect(request.headers).toMatchObject({
      authorization: "Bearer ap_pat_test",
      "user-agent": `architecture-portfolio-typescript/${VERSION}`,
      accept: "application/json"
    })
  })

  it("adds the client's headers to every request, and a call's headers over them", async () => {
    const { fetch, requests } = fakeFetch(json([]), json([]))
    const client = instantClient(fetch, { headers: { "X-Team": "billing", "X-Trace": "client" } })
    await client.functions.tree()
    await client.functions.flat({}, { headers: { "x-trace": "call" } })
    expect(requests[0]!.headers).toMatchObject({ "x-team": "billing", "x-trace": "client", authorization: "Bearer ap_pat_test" })
    expect(requests[1]!.headers).toMatchObject({ "x-team": "billing", "x-trace": "call", authorization: "Bearer ap_pat_test" })
  })

  it("lets the client's headers replace the SDK's own whatever their case, and trims them as fetch would", async () => {
    const { fetch, requests } = fakeFetch(json([]))
    await instantClient(fetch, { headers: { "User-Agent": "billing-sync/2", AUTHORIZATION: "Bearer ap_pat_other", "X-Trace": " t1\n" } }).functions.tree()
    expect(requests[0]!.headers).toMatchObject({ "user-agent": "billing-sync/2", authorization: "Bearer ap_pat_other", "x-trace": "t1" })
    expect(Object.keys(requests[0]!.headers).filter((name) => name.toLowerCase() === "user-agent")).toEqual(["user-agent"])
  })

  it("refuses a header fetch would refuse, naming it without quoting its value, and sends nothing", async () => {
    const { fetch, requests } = fakeFetch(json([]))
    const secret = "s3cr3t\r\nX-Injected: 1"
    let error: unknown
    try {
      instantClient(fetch, { headers: { "x-api-key": secret } })
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(TypeError)
    expect((error as Error).message).toMatch(/x-api-key/)
    expect((error as Error).message).not.toContain("s3cr3t")
    expect(() => instantClient(fetch, { headers: { "bad name": "v" } })).toThrow(TypeError)
    const onCall = await rejection(instantClient(fetch).functions.tree({ headers: { "x-api-key": "s3cr3t\u20ac" } }))
    expect(onCall).toBeInstanceOf(TypeError)
    expect(onCall.message).not.toContain("s3cr3t")
    expect(requests).toHaveLength(0)
  })

  it("trims the token as fetch would, and refuses one fetch would refuse without quoting it", async () => {
    const { fetch, requests } = fakeFetch(json([]))
    await instantClient(fetch, { token: " ap_pat_fromfile\n" }).functions.tree()
    expect(requests[0]!.headers.authorization).toBe("Bearer ap_pat_fromfile")
    for (const token of ["ap_pat_SEC\nRET", "ap_pat_SEC RET", "ap_pat_SECRET\u20ac"]) {
      let error: unknown
      try {
        new PortfolioClient({ token, fetch })
      } catch (caught) {
        error = caught
      }
      expect(error, JSON.stringify(token)).toBeInstanceOf(TypeError)
      expect((error as Error).message).not.toMatch(/SEC/)
    }
  })

  it("appends paths to the base URL, with or without its trailing slash, never resolving them against the origin", async () => {
    for (const base of ["https://gw.example.test/portfolio/api/v1", "https://gw.example.test/portfolio/api/v1/"]) {
      const { fetch, requests } = fakeFetch(json([]))
      await new PortfolioClient({ token: "t", baseUrl: base, fetch }).functions.stats()
      expect(requests[0]!.url.href).toBe("https://gw.example.test/portfolio/api/v1/referentiel/functions/stats")
    }
  })

  it("defaults the base URL to http://localhost:8080/api/v1", async () => {
    const { fetch, requests } = fakeFetch(json([]))
    await new PortfolioClient({ token: "t", fetch }).functions.tree()
    expect(requests[0]!.url.href).toBe("http://localhost:8080/api/v1/referentiel/functions")
  })

  it("uses the platform's fetch when none is given", async () => {
    const original = globalThis.fetch
    const { fetch, requests } = fakeFetch(json({ functionCount: 1 }))
    globalThis.fetch = fetch as typeof globalThis.fetch
    try {
      expect(await new PortfolioClient({ token: "t" }).functions.stats()).toEqual({ functionCount: 1 })
    } finally {
      globalThis.fetch = original
    }
    expect(requests[0]!.url.href).toBe("http://localhost:8080/api/v1/referentiel/functions/stats")
  })

  it("refuses a client without a token, with a relative base URL or with impossible settings", () => {
    expect(() => new PortfolioClient({ token: "" })).toThrow(/token/)
    expect(() => new PortfolioClient({} as { token: string })).toThrow(/token/)
    expect(() => new PortfolioClient({ token: "t", baseUrl: "/api/v1" })).toThrow(/baseUrl/)
    expect(() => new PortfolioClient({ token: "t", baseUrl: "localhost:8080/api/v1" })).toThrow(/baseUrl/)
    expect(() => new PortfolioClient({ token: "t", baseUrl: "https://gw.example.test/api/v1?tenant=a" })).toThrow(/query/)
    expect(() => new PortfolioClient({ token: "t", baseUrl: "https://gw.example.test/api/v1#x" })).toThrow(/fragment/)
    expect(() => new PortfolioClient({ token: "t", baseUrl: "https://me:hunter2@gw.example.test/api/v1" })).toThrow(/user name or password/)
    expect(() => new PortfolioClient({ token: "t", baseUrl: "https://me:hunter2@gw.example.test/api/v1" })).not.toThrow(/hunter2/)
    expect(() => new PortfolioClient({ token: "t", timeout: 0 })).toThrow(RangeError)
    expect(() => new PortfolioClient({ token: "t", timeout: Number.NaN })).toThrow(RangeError)
    expect(() => new PortfolioClient({ token: "t", maxRetries: -1 })).toThrow(RangeError)
    expect(() => new PortfolioClient({ token: "t", maxRetries: 1.5 })).toThrow(RangeError)
  })

  it("has the version of its package.json, its changelog and its README", () => {
    const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"))
    expect(VERSION).toBe(manifest.version)
    expect(VERSION).toBe("0.1.87")
    expect(readFileSync(new URL("../CHANGELOG.md", import.meta.url), "utf8")).toMatch(new RegExp(`^## ${VERSION.replace(/\./g, "\\.")}$`, "m"))
    expect(readFileSync(new URL("../README.md", import.meta.url), "utf8")).toContain(`architecture-portfolio-typescript/${VERSION}`)
  })
})

describe("withResponse", () => {
  it("gives the data with the HTTP answer, the rate-limit headers and the request id", async () => {
    const { fetch } = fakeFetch(json(app))
    const { data, response, rateLimit, requestId } = await instantClient(fetch).applications.get("CRM-01").withResponse()
    expect(data).toEqual(app)
    expect(response.status).toBe(200)
    expect(response.headers.get("x-ratelimit-limit")).toBe(rateLimitHeaders["x-ratelimit-limit"])
    expect(rateLimit).toEqual({ limit: 180, remaining: 179, reset: 1795340460 })
    expect(requestId).toBe("req_test")
  })

  it("gives null rate limit and request id when the answer lacks them", async () => {
    const { fetch } = fakeFetch(new Response("[]", { headers: { "x-ratelimit-limit": "180" } }))
    const { rateLimit, requestId, data } = await instantClient(fetch).functions.tree().withResponse()
    expect({ rateLimit, requestId, data }).toEqual({ rateLimit: null, requestId: null, data: [] })
  })

  it("works on a list's promise and on a 204", async () => {
    const { fetch } = fakeFetch(json([invitation], 200, { link: '<?limit=1&cursor=n>; rel="next"' }), noContent())
    const client = instantClient(fetch)
    const page = await client.invitations.list({ limit: 1 }).withResponse()
    expect(page.data).toEqual([invitation])
    expect(page.response.headers.get("link")).toContain("cursor=n")
    const revoked = await client.invitations.revoke(invitation.id).withResponse()
    expect(revoked.data).toBeUndefined()
    expect(revoked.response.status).toBe(204)
    expect(revoked.rateLimit?.remaining).toBe(179)
  })

  it("shares one request between awaiting the promise and withResponse", async () => {
    const { fetch, requests } = fakeFetch(json(app))
    const promise = instantClient(fetch).applications.get("CRM-01")
    const [data, answer] = await Promise.all([promise, promise.withResponse()])
    expect(data).toEqual(app)
    expect(answer.data).toBe(data)
    expect(requests).toHaveLength(1)
  })

  it("behaves as a promise: then, catch, finally", async () => {
    const { fetch } = fakeFetch(json(app), new Response("oops", { status: 500 }))
    const client = instantClient(fetch, { maxRetries: 0 })
    expect(await client.applications.get("CRM-01").then((value) => value.code)).toBe("CRM-01")
    let settled = false
    const caught = await client.applications
      .get("CRM-02")
      .finally(() => (settled = true))
      .catch((error: unknown) => (error as Error).name)
    expect(caught).toBe("ServerError")
    expect(settled).toBe(true)
  })
})
