import fc from "fast-check"
import { beforeAll, describe, expect, it } from "vitest"
import { send } from "../support/http.js"
import {
  anyText,
  badLimit,
  badQ,
  corruptedApplication,
  nonStringOrNull,
  notAnObject,
  notOneOf,
  regulationTokens,
  segment,
  validApplication
} from "../support/malformed.js"
import { expectClientProblem, expectProblem, expectRateLimitHeaders, prefixed } from "../support/problem.js"
import { sendRaw } from "../support/rawHttp.js"
import type { CreatedPat, CreatedTenant } from "../support/system.js"
import { useSharedSystem } from "../support/useSystem.js"

// Hundreds of calls with one token: the limit is not the subject here.
const system = useSharedSystem()

/** Enough runs to find the usual suspects; bounded so that the file stays well under a minute. */
const runs = { numRuns: 40 }

let tenant: CreatedTenant
let admin: CreatedPat
let functionId: string
let before: Snapshot

const apps = "/referentiel/applications"

/** The path as the server saw it: what `instance` must repeat. */
const pathnameOf = (url: string) => new URL(url).pathname

const snapshot = async () => {
  const api = system.api(admin.token)
  const [list, one, changes, flat, invitations] = await Promise.all([
    api.get(apps),
    api.get(`${apps}/APP-1`),
    api.get(`${apps}/APP-1/changes?limit=200`),
    api.get("/referentiel/functions/flat"),
    api.get("/tenant/invitations")
  ])
  return {
    list: [list.status, list.body],
    one: [one.status, one.body],
    changes: [changes.status, changes.body],
    flat: [flat.status, flat.body],
    invitations: [invitations.status, invitations.body]
  }
}
type Snapshot = Awaited<ReturnType<typeof snapshot>>

beforeAll(async () => {
  tenant = await system.createTenant("bb-fuzz")
  admin = await system.createPat(tenant, "write")
  await system.putApplication(tenant, { code: "APP-1", name: "One", status: "ACTIVE", regulations: "DORA", licenseCost: 100 })
  await system.putApplication(tenant, { code: "APP-2", name: "Two", status: "PLANNED", parentCode: "APP-1" })
  const created = await system.adminOk("referential", "POST", `/admin/tenants/${tenant.id}/functions`, { code: "F1", name: "Function one" })
  functionId = created.id
  await system.adminOk("referential", "PUT", `/admin/tenants/${tenant.id}/functions/${functionId}/applications/APP-1`)
  before = await snapshot()
  expect(before.list[0]).toBe(200)
}, 240_000)

const expectUnchanged = async () => expect(await snapshot()).toEqual(before)

/** `examples` always run first, so that a known offender is caught on every run, not by chance. */
const property = <T>(arbitrary: fc.Arbitrary<T>, check: (value: T) => Promise<void>, examples: ReadonlyArray<T> = []) =>
  fc.assert(fc.asyncProperty(arbitrary, check), { ...runs, examples: examples.map((example): [T] => [example]) })

describe("query parameters", () => {
  it.each([
    ["data_class", ["PUBLIC", "INTERNAL", "CONFIDENTIAL", "RESTRICTED"]],
    ["criticality", ["MISSION_CRITICAL", "IMPORTANT", "NOMINAL", "LOW"]],
    ["regulation", regulationTokens],
    ["status", ["ACTIVE", "PLANNED", "DEPRECATED", "RETIRED"]]
  ])("refuses any malformed %s with 400 INVALID_REQUEST", async (name, allowed) => {
    await property(notOneOf(allowed), async (value) => {
      const reply = await system.api(admin.token).get(`${apps}?${new URLSearchParams({ [name]: value })}`)
      expectProblem(reply, "INVALID_REQUEST", prefixed(apps))
    }, ["\u0000", `${allowed[0]}\u0000`])
  })

  it("refuses a filter given twice with 400 INVALID_REQUEST", async () => {
    const reply = await system.api(admin.token).get(`${apps}?status=ACTIVE&status=PLANNED`)
    expectProblem(reply, "INVALID_REQUEST", prefixed(apps))
  })

  it("refuses any malformed changes limit with 400 INVALID_REQUEST", async () => {
    await property(badLimit, async (limit) => {
      const reply = await system.api(admin.token).get(`${apps}/APP-1/changes?${new URLSearchParams({ limit })}`)
      expectProblem(reply, "INVALID_REQUEST", prefixed(`${apps}/APP-1/changes`))
    })
  })

  it("answers any limit with 200 and at most 200 entries, or a 400 problem", async () => {
    await property(anyText, async (limit) => {
      const reply = await system.api(admin.token).get(`${apps}/APP-1/changes?${new URLSearchParams({ limit })}`)
      if (reply.status === 200) expect(reply.body.length).toBeLessThanOrEqual(200)
      else expectProblem(reply, "INVALID_REQUEST", prefixed(`${apps}/APP-1/changes`))
    }, ["\u0000", "5\u0000"])
  })

  it("refuses a malformed search q with 400 INVALID_REQUEST", async () => {
    await property(badQ, async (q) => {
      const reply = await system.api(admin.token).get(`/referentiel/functions/search?${new URLSearchParams({ q })}`)
      expectProblem(reply, "INVALID_REQUEST", prefixed("/referentiel/functions/search"))
    })
  })

  it("answers any search q with 200 and a list, or a 400 problem, never a 5xx", async () => {
    await property(anyText, async (q) => {
      const reply = await system.api(admin.token).get(`/referentiel/functions/search?${new URLSearchParams({ q })}`)
      if (reply.status === 200) expect(Array.isArray(reply.body)).toBe(true)
      else expectProblem(reply, "INVALID_REQUEST", prefixed("/referentiel/functions/search"))
    }, ["a\u0000b", "%", "_", "\\"])
  })
})

describe("path parameters", () => {
  const functionLiterals = ["flat", "posi", "search", "stats", "by-application"]
  const cases: ReadonlyArray<[string, string, (s: string) => string, ReadonlyArray<string>]> = [
    ["GET", "application code", (s) => `${apps}/${s}`, ["APP-1", "APP-2"]],
    ["GET", "application code of changes", (s) => `${apps}/${s}/changes`, ["APP-1", "APP-2"]],
    ["GET", "application code of by-application", (s) => `/referentiel/functions/by-application/${s}`, ["APP-1", "APP-2"]],
    ["GET", "function id", (s) => `/referentiel/functions/${s}`, [...functionLiterals, "F1"]],
    ["DELETE", "invitation id", (s) => `/tenant/invitations/${s}`, ["members"]],
    ["DELETE", "member userSub", (s) => `/tenant/invitations/members/${s}`, []]
  ]

  it.each(cases)("answers %s with a malformed or unknown %s with a 4xx problem", async (method, _name, build, taken) => {
    await property(segment([...taken, tenant.adminSub]), async (value) => {
      const url = `${system.baseUrl}${build(value)}`
      const reply = await send(url, { method, token: admin.token })
      expectClientProblem(reply, pathnameOf(url))
    }, ["%00", "a%00b", "%FF", "%C0%AF"])
    await expectUnchanged()
  })

  it("answers the real function id (control)", async () => {
    expect((await system.api(admin.token).get(`/referentiel/functions/${functionId}`)).status).toBe(200)
  })
})

describe("bodies", () => {
  const invitations = "/tenant/invitations"

  it("refuses invitation bodies that are not JSON objects with 400 INVALID_REQUEST", async () => {
    await property(notAnObject, async (body) => {
      const reply = await system.api(admin.token).post(invitations, { body, headers: { "content-type": "application/json" } })
      expectProblem(reply, "INVALID_REQUEST", prefixed(invitations))
    })
    await expectUnchanged()
  })

  it("refuses invitations with wrongly typed or missing fields with a 4xx problem", async () => {
    const badInvitation = fc.oneof(
      fc.record({ email: nonStringOrNull, arbRole: fc.constant("viewer") }),
      fc.record({ email: fc.constant("x@bb-fuzz.example"), arbRole: nonStringOrNull }),
      fc.record({ arbRole: fc.constant("viewer") }),
      fc.record({ email: fc.constant("x@bb-fuzz.example") })
    )
    await property(badInvitation, async (body) => {
      const reply = await system.api(admin.token).post(invitations, { body })
      expectClientProblem(reply, prefixed(invitations))
    })
    await expectUnchanged()
  })

  it("refuses a malformed e-mail or an unknown role with 400 INVALID_INVITATION_PARAM", async () => {
    const badValues = fc.oneof(
      fc.record({ email: fc.string({ maxLength: 30 }).filter((s) => !s.includes("@")), arbRole: fc.constant("viewer") }),
      fc.record({
        email: fc.constant("someone@bb-fuzz.example"),
        arbRole: notOneOf(["tenant-admin", "architect", "portfolio-manager", "contributor", "viewer", "arb-member"])
      })
    )
    await property(badValues, async (body) => {
      const reply = await system.api(admin.token).post(invitations, { body })
      expectProblem(reply, "INVALID_INVITATION_PARAM", prefixed(invitations))
    })
    await expectUnchanged()
  })

  it("refuses an oversized body with a 4xx problem, unread", async () => {
    // Its first 64 KiB only: the answer comes before the rest would be read, and a client still
    // writing the rest to a closed connection would meet a reset first (fetch: EPIPE) on a loaded machine.
    const declared = 3 * 1024 * 1024
    const start = JSON.stringify({ email: "big@bb-fuzz.example", arbRole: "viewer", padding: "x".repeat(64 * 1024) })
    const reply = await sendRaw(
      system.system.gatewayUrl,
      [
        `POST ${prefixed(invitations)} HTTP/1.1`,
        "Host: gateway",
        `Authorization: Bearer ${admin.token}`,
        "Content-Type: application/json",
        `Content-Length: ${declared}`,
        "",
        start
      ].join("\r\n")
    )
    expectClientProblem(reply, prefixed(invitations))
    expect(reply.status).toBe(413)
    await expectUnchanged()
  })
})

describe("the referential admin PUT", () => {
  const adminPath = (code: string) => `/admin/tenants/${tenant.id}/applications/${code}`

  it.each(["APP-1", "NEW-1"])("refuses a body with one malformed field for %s with a 4xx problem, storing nothing", async (code) => {
    await property(corruptedApplication, async (body) => {
      const reply = await system.admin("referential", "PUT", adminPath(code), { body })
      expectClientProblem(reply, adminPath(code))
    })
    await expectUnchanged()
  })

  it("refuses free text holding a NUL character with a 4xx problem, storing nothing", async () => {
    const withNul = fc.tuple(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 })).map(([a, b]) => `x${a}\u0000${b}x`)
    const body = fc
      .constantFrom("name", "description", "contactIT", "contactMetier", "roleAssignments")
      .chain((field) => withNul.map((text) => ({ ...validApplication, [field]: field === "roleAssignments" ? `TECH_LEAD:${text}` : text })))
    await property(body, async (value) => {
      const reply = await system.admin("referential", "PUT", adminPath("NEW-1"), { body: value })
      expectClientProblem(reply, adminPath("NEW-1"))
    }, [{ ...validApplication, name: "a\u0000b" }])
    const functions = `/admin/tenants/${tenant.id}/functions`
    for (const input of [{ code: "F\u0000", name: "x" }, { code: "F-NUL", name: "a\u0000b" }]) {
      expectClientProblem(await system.admin("referential", "POST", functions, { body: input }), functions)
    }
    await expectUnchanged()
  })

  it("refuses a body that is not a JSON object with 400 INVALID_REQUEST", async () => {
    await property(notAnObject, async (body) => {
      const reply = await system.admin("referential", "PUT", adminPath("APP-1"), { body, headers: { "content-type": "application/json" } })
      expectProblem(reply, "INVALID_REQUEST", adminPath("APP-1"))
    })
    await expectUnchanged()
  })

  it("refuses malformed codes and tenant ids in the path with a 4xx problem", async () => {
    const codePattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
    const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
    const malformed = (valid: RegExp) =>
      fc.oneof(
        fc.oneof(anyText, fc.string({ minLength: 65, maxLength: 80 }))
          .filter((s) => s.length > 0 && s !== "." && s !== ".." && !valid.test(s))
          .map(encodeURIComponent),
        fc.constantFrom("%", "%zz", "%FF", "%C0%AF", "%2F")
      )
    const paths = fc.oneof(
      malformed(codePattern).map((code) => adminPath(code)),
      malformed(uuidPattern).map((tenantId) => `/admin/tenants/${tenantId}/applications/APP-1`)
    )
    await property(paths, async (path) => {
      const url = `${system.system.adminUrls.referential}${path}`
      const reply = await system.admin("referential", "PUT", pathnameOf(url), { body: { name: "Sneaky", status: "ACTIVE" } })
      expectClientProblem(reply, pathnameOf(url))
    })
    await expectUnchanged()
  })
})

describe("tokens", () => {
  it("answers any Authorization value that is not a PAT with a 401 problem", async () => {
    const printable = fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 60 })
    await property(fc.tuple(fc.constantFrom("Bearer ", "bearer ", "Basic ", "", "Bearer  "), printable), async ([scheme, value]) => {
      const reply = await send(`${system.baseUrl}${apps}`, { headers: { authorization: `${scheme}${value}` } })
      expectProblem(reply, "UNAUTHENTICATED", prefixed(apps))
    })
  })
})

describe("request targets no HTTP client would send", () => {
  // Each of these once made the gateway's request listener throw, which ended the process.
  it.each(["http://[bad/x", "http://x:abc/", "http://:99999/x", "http://[::1/api/v1/referentiel/applications", "*"])(
    "answers GET %s with a 400 problem and goes on serving",
    async (target) => {
      const reply = await sendRaw(system.system.gatewayUrl, `GET ${target} HTTP/1.1\r\nHost: gateway\r\nConnection: close\r\n\r\n`)
      expectProblem(reply, "INVALID_REQUEST", target)
      expectRateLimitHeaders(reply)
      const after = await system.api(admin.token).get(apps)
      expect(after.status).toBe(200)
    }
  )

  it("answers an absolute-form target (RFC 9112) like the path it names", async () => {
    const reply = await sendRaw(
      system.system.gatewayUrl,
      `GET http://gateway${prefixed(apps)} HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${admin.token}\r\nConnection: close\r\n\r\n`
    )
    expect(reply.status, reply.text.slice(0, 300)).toBe(200)
    expect(reply.body.map((a: any) => a.code)).toContain("APP-1")
  })
})

describe("after all of it", () => {
  it("nothing changed", async () => {
    await expectUnchanged()
  })
})
