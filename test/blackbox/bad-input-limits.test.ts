import fc from "fast-check"
import { randomUUID } from "node:crypto"
import { beforeAll, describe, expect, it } from "vitest"
import { type EndpointUnderTest, everyEndpoint, expectCode, expectEndpointProblem, fillPath, isScimPath, sendExact } from "../support/limits.js"
import { expectRateLimitHeaders } from "../support/problem.js"
import { isWelcomeOf } from "../support/provisioning.js"
import { sendRaw } from "../support/rawHttp.js"
import { CallerIdentity } from "@portfolio/domain"
import { AssertionHeader, signAssertion } from "@portfolio/platform/security"
import { type CreatedPat, type CreatedTenant, operatorIdentity } from "../support/system.js"
import { useSharedSystem } from "../support/useSystem.js"

// Limits of request bodies and paths (docs/product-rules.md#errors), sent to every endpoint of every
// contract: through the gateway and straight to the service that answers it for the public API,
// on its admin port for the others. Path, size and media-type checks come before authentication;
// a JSON body is read (and its depth checked) only for a request whose assertion holds, so the
// straight calls of the depth check carry one, and without one they are refused unread (401).
const system = useSharedSystem()

let tenant: CreatedTenant
let admin: CreatedPat
let functionId: string
/** The tenant's SCIM token: SCIM's endpoints take nothing else (docs/scim.md). */
let scimToken: string

const MiB = 1024 * 1024

beforeAll(async () => {
  tenant = await system.createTenant("bb-limits")
  admin = await system.createPat(tenant, "write")
  await system.adminOk("referential", "PUT", `/admin/tenants/${tenant.id}/applications/APP-1`, { name: "One", status: "ACTIVE" })
  functionId = (await system.adminOk("referential", "POST", `/admin/tenants/${tenant.id}/functions`, { code: "F1", name: "Function one" })).id
  scimToken = (await system.adminOk("gateway", "POST", `/admin/tenants/${tenant.id}/scim-tokens`, { label: "limits" })).token
}, 240_000)

/** Existing resources where they are needed, and an unknown member: no bad call may remove a real one. */
const fixture = (param: string): string => {
  const known: Record<string, string> = { code: "APP-1", tenantId: tenant.id, slug: tenant.slug, email: tenant.adminEmail, userSub: "nobody-limits", id: functionId }
  return known[param] ?? randomUUID()
}

type Via = "gateway" | "service"
interface Target {
  readonly endpoint: EndpointUnderTest
  readonly via: Via
}
const targetsOf = (endpoints: ReadonlyArray<EndpointUnderTest>): ReadonlyArray<[string, Target]> =>
  endpoints.flatMap((endpoint) =>
    (endpoint.port === "public" ? (["gateway", "service"] as const) : (["service"] as const)).map((via): [string, Target] => [
      `${endpoint.method} ${endpoint.path} (${endpoint.port === "admin" ? `${endpoint.service} admin port` : via === "gateway" ? "gateway" : `${endpoint.service} port`})`,
      { endpoint, via }
    ]))

const originOf = ({ endpoint, via }: Target) =>
  via === "gateway" ? system.system.gatewayUrl : endpoint.port === "admin" ? system.system.adminUrls[endpoint.service] : system.system.serviceUrls[endpoint.service]

const isScim = ({ endpoint }: Target) => isScimPath(endpoint.path)

const bearer = (target: Target): Record<string, string> =>
  target.via === "gateway" ? { authorization: `Bearer ${isScim(target) ? scimToken : admin.token}` } : {}

/**
 * Whether the answer is a SCIM error: every answer under SCIM's paths through the gateway, and the
 * ones provisioning's SCIM routes make themselves; not the ones its server makes before any route
 * (`byServer`: a path it refuses to route, a body over its limit), which only the gateway's own
 * refusal of the same request ever precedes.
 */
const scimAnswer = (target: Target, byServer = false) => isScim(target) && (target.via === "gateway" || !byServer)

/** What lets a straight call reach its endpoint: an assertion signed for exactly this request. */
const assertionFor = ({ endpoint, via }: Target, path: string, body: string): Record<string, string> => {
  if (via === "gateway") return {}
  const identity = endpoint.port === "admin"
    ? operatorIdentity
    : isScimPath(endpoint.path)
    ? new CallerIdentity({ tenantId: tenant.id, subject: "scim:limits", role: "scim", scope: "write" })
    : new CallerIdentity({ tenantId: tenant.id, subject: tenant.adminSub, role: "tenant-admin", scope: "write" })
  return { [AssertionHeader]: signAssertion(system.secret, identity, { audience: endpoint.service, method: endpoint.method, target: path, body }) }
}

const withBody = targetsOf(everyEndpoint.filter((endpoint) => endpoint.takesJson))
const withParams = targetsOf(everyEndpoint.filter((endpoint) => endpoint.params.length > 0))

describe("request bodies, on every endpoint that takes JSON", () => {
  const deep = (depth: number) => ["[".repeat(depth) + "]".repeat(depth), `${"{\"a\":".repeat(depth)}1${"}".repeat(depth)}`]

  it.each(withBody)("%s: nesting 3,000 deep is a 400 INVALID_REQUEST", async (_, target) => {
    const path = fillPath(target.endpoint, fixture)
    for (const body of deep(3000)) {
      const headers = { ...bearer(target), ...assertionFor(target, path, body), "content-type": "application/json" }
      const reply = await sendExact(`${originOf(target)}${path}`, { method: target.endpoint.method, headers, body })
      expectCode(reply, "INVALID_REQUEST", path, scimAnswer(target))
      if (target.via === "service") {
        // Without an assertion, nobody makes the service read the body: authentication refuses it.
        const unsigned = await sendExact(`${originOf(target)}${path}`, { method: target.endpoint.method, headers: { "content-type": "application/json" }, body })
        expectCode(unsigned, "UNAUTHENTICATED", path, scimAnswer(target))
      }
    }
  })

  it.each(withBody)("%s: a huge but shallow body is a 4xx problem", async (_, target) => {
    const path = fillPath(target.endpoint, fixture)
    const array = `[${"0,".repeat(Math.floor(MiB / 2) - 2)}0]`
    const object = `{${Array.from({ length: 40_000 }, (_, i) => `"k${i}":[0]`).join(",")}}`
    for (const body of [array, object]) {
      const reply = await sendExact(`${originOf(target)}${path}`, { method: target.endpoint.method, headers: { ...bearer(target), "content-type": "application/json" }, body })
      expectEndpointProblem(reply, path)
    }
  })

  const notJson: ReadonlyArray<[string | undefined, string]> = [
    ["application/x-www-form-urlencoded", "email=form%40bb-limits.example&arbRole=viewer&name=Form&code=FORM-1"],
    ["text/plain", JSON.stringify({ email: "text@bb-limits.example", arbRole: "viewer" })],
    ["text/plain;charset=UTF-8", "{}"],
    ["multipart/form-data; boundary=b", "--b\r\nContent-Disposition: form-data; name=\"email\"\r\n\r\nm@bb-limits.example\r\n--b--\r\n"],
    ["application/merge-patch+json", "{}"],
    ["application/xml", "<x/>"],
    ["application/json; charset=iso-8859-1", "{}"],
    [undefined, "{}"]
  ]

  it.each(withBody)("%s: a body that is not application/json is a 415 UNSUPPORTED_MEDIA_TYPE", async (_, target) => {
    const path = fillPath(target.endpoint, fixture)
    for (const [contentType, body] of notJson) {
      const headers = { ...bearer(target), ...(contentType === undefined ? {} : { "content-type": contentType }) }
      const reply = await sendExact(`${originOf(target)}${path}`, { method: target.endpoint.method, headers, body })
      expectCode(reply, "UNSUPPORTED_MEDIA_TYPE", path, scimAnswer(target))
    }
  })

  it.each(withBody)("%s: a body over 1 MiB is a 413 PAYLOAD_TOO_LARGE", async (_, target) => {
    const path = fillPath(target.endpoint, fixture)
    const body = JSON.stringify({ padding: "x".repeat(MiB) })
    const reply = await sendExact(`${originOf(target)}${path}`, { method: target.endpoint.method, headers: { ...bearer(target), "content-type": "application/json" }, body })
    expectCode(reply, "PAYLOAD_TOO_LARGE", path, scimAnswer(target, true))
  })

  it("takes application/json with a UTF-8 charset (control), and no bad body above created anything", async () => {
    // The admin's own welcome link aside (made with the tenant), no invitation exists yet.
    const invitations = await system.api(admin.token).get("/tenant/invitations")
    expect(invitations.body.filter((i: { email: string; arbRole: string }) => !isWelcomeOf(tenant)(i))).toEqual([])
    const reply = await sendExact(`${system.baseUrl}/tenant/invitations`, {
      method: "POST",
      headers: { authorization: `Bearer ${admin.token}`, "content-type": "application/json; charset=utf-8" },
      body: JSON.stringify({ email: "control@bb-limits.example", arbRole: "viewer" })
    })
    expect(reply.status, reply.text).toBe(201)
  })
})

describe("path parameters, on every endpoint that has some", () => {
  /** Longer than find-my-way's default of 100 characters, some as long as a schema allows (userSub: 255), some longer. */
  // At most 800 characters, 7,200 once encoded: the request line stays within the 16 KiB a request head may have.
  const longValue = fc.tuple(fc.constantFrom("a", "\u00e9", "\u20ac", "-", "7"), fc.integer({ min: 101, max: 800 }))
    .map(([char, length]) => encodeURIComponent(char.repeat(length)))

  it.each(withParams)("%s: a long parameter is answered by the endpoint, never the router's 404", async (_, target) => {
    const { endpoint } = target
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...endpoint.params), longValue, async (param, value) => {
        const path = fillPath(endpoint, (name) => (name === param ? value : fixture(name)))
        const options = { headers: bearer(target), ...(endpoint.takesJson ? { body: {} } : {}) }
        const reply = endpoint.port === "admin"
          ? await system.admin(endpoint.service, endpoint.method, path, options)
          : await sendExact(`${originOf(target)}${path}`, {
            method: endpoint.method,
            headers: { ...options.headers, ...(endpoint.takesJson ? { "content-type": "application/json" } : {}) },
            ...(endpoint.takesJson ? { body: "{}" } : {})
          })
        expectEndpointProblem(reply, path)
      }),
      { numRuns: 6, examples: [[endpoint.params[0]!, "u".repeat(255)], [endpoint.params[endpoint.params.length - 1]!, encodeURIComponent("\u20ac".repeat(255))]] }
    )
  })

  it("removes a member whose userSub is as long as the schema allows (255 characters)", async () => {
    const userSub = `sso|${"\u00e9".repeat(251)}`
    await system.adminOk("provisioning", "POST", `/admin/tenants/${tenant.slug}/sso-members`, { userSub, email: "long-sub@bb-limits.example" })
    const removed = await system.api(admin.token).del(`/tenant/invitations/members/${encodeURIComponent(userSub)}`)
    expect(removed.status, removed.text).toBe(204)
    const members = await system.api(admin.token).get("/tenant/invitations/members")
    expect(members.body.map((member: { userSub: string }) => member.userSub)).not.toContain(userSub)
  })
})

describe("paths that servers read differently", () => {
  const smuggled = ["a;b", "..", "%2e%2E", "a%2Fb", "a%2fb", "a\\b", "a%5Cb", "%zz"]
  const everyTarget = targetsOf(everyEndpoint)

  it.each(everyTarget)("%s: a ';', a dot segment, an encoded slash or a backslash is a 400 INVALID_REQUEST", async (_, target) => {
    const { endpoint } = target
    const paths = endpoint.params.length === 0
      ? [`${endpoint.path};x=1`, `${endpoint.path}/.`, `/x/..${endpoint.path}`]
      : smuggled.flatMap((value) => endpoint.params.map((param) => fillPath(endpoint, (name) => (name === param ? value : fixture(name)))))
    for (const path of paths) {
      const head = [`${endpoint.method} ${path} HTTP/1.1`, "Host: limits", "Connection: close", "Content-Length: 0", ...Object.entries(bearer(target)).map(([k, v]) => `${k}: ${v}`)]
      const reply = await sendRaw(originOf(target), `${head.join("\r\n")}\r\n\r\n`)
      // A path whose dot segments only resolve under SCIM's prefix is not under it as sent.
      expectCode(reply, "INVALID_REQUEST", path, scimAnswer(target, true) && isScimPath(path))
      if (target.via === "gateway") expectRateLimitHeaders(reply)
    }
  })
})

describe("after all of it", () => {
  it("every server still answers, and nothing but the control changed", async () => {
    const invitations = await system.api(admin.token).get("/tenant/invitations")
    expect(invitations.body.filter((i: { email: string; arbRole: string }) => !isWelcomeOf(tenant)(i)).map((i: { email: string }) => i.email))
      .toEqual(["control@bb-limits.example"])
    const functions = await system.api(admin.token).get("/referentiel/functions/flat")
    expect(functions.body.map((fn: { code: string }) => fn.code)).toEqual(["F1"])
  })
})
