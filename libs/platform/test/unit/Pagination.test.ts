import { describe, expect, it } from "@effect/vitest"
import { InvalidRequest, PageCursorMaxLength } from "@portfolio/domain"
import { Result, Option, Schema } from "effect"
import { cursorCodec, CursorTime, cursorOfNextLink, nextPageReference, pageLimit, pageOf } from "../../src/http/Pagination.js"

const applications = cursorCodec("applications", Schema.String)
const invitations = cursorCodec("invitations", Schema.Tuple([CursorTime, Schema.String.check(Schema.isUUID())]))
const scope = { tenantId: "t-1", filters: { status: "ACTIVE" } }

const refused = (result: Result.Result<unknown, InvalidRequest>) => {
  expect(Result.isFailure(result)).toBe(true)
  const error = Result.getFailure(result).pipe(Option.getOrThrow)
  expect(error).toBeInstanceOf(InvalidRequest)
  expect(error.detail).toMatch(/^invalid cursor/)
}

const envelopeOf = (cursor: string) => JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
const cursorOf = (envelope: unknown) => Buffer.from(JSON.stringify(envelope)).toString("base64url")

describe("cursor codec", () => {
  it("decodes what it encoded, for the same list and scope", () => {
    const cursor = applications.encode(scope, "APP-0042")
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/)
    expect(applications.decode(scope, cursor)).toEqual(Result.succeed("APP-0042"))
    const id = "3f1c6f0e-8b5a-4f7e-9a51-2f4f8f3f0a11"
    expect(invitations.decode({ tenantId: "t-1" }, invitations.encode({ tenantId: "t-1" }, [1_700_000_000_123, id]))).toEqual(
      Result.succeed([1_700_000_000_123, id])
    )
  })

  it("reads equal filters as the same list, whatever their order or absent members", () => {
    const cursor = applications.encode({ tenantId: "t-1", filters: { status: "ACTIVE", criticality: "LOW" } }, "A")
    expect(applications.decode({ filters: { criticality: "LOW", status: "ACTIVE", regulation: undefined }, tenantId: "t-1" }, cursor)).toEqual(
      Result.succeed("A")
    )
  })

  it("refuses a cursor of other filters, another tenant or another list", () => {
    const cursor = applications.encode(scope, "APP-0042")
    refused(applications.decode({ ...scope, filters: { status: "RETIRED" } }, cursor))
    refused(applications.decode({ ...scope, filters: {} }, cursor))
    refused(applications.decode({ ...scope, tenantId: "t-2" }, cursor))
    refused(cursorCodec("functions-search", Schema.String).decode(scope, cursor))
  })

  it("refuses a tampered cursor: another key, list or scope digest, a version, an extra member", () => {
    const envelope = envelopeOf(applications.encode(scope, "APP-0042"))
    expect(Object.keys(envelope).sort()).toEqual(["k", "l", "s", "v"])
    // The key alone changed keeps the digest: it is a position in the same list, which grants nothing more.
    expect(applications.decode(scope, cursorOf({ ...envelope, k: "APP-0001" }))).toEqual(Result.succeed("APP-0001"))
    refused(applications.decode(scope, cursorOf({ ...envelope, k: 42 })))
    refused(applications.decode(scope, cursorOf({ ...envelope, l: "members" })))
    refused(applications.decode(scope, cursorOf({ ...envelope, s: "AAAAAAAAAAAAAAAA" })))
    refused(applications.decode(scope, cursorOf({ ...envelope, v: 2 })))
    refused(applications.decode(scope, cursorOf({ ...envelope, tenantId: "t-2" })))
    const { k: _k, ...keyless } = envelope
    refused(applications.decode(scope, cursorOf(keyless)))
  })

  it("refuses key values a query could not take: times out of range, not a UUID", () => {
    const tenant = { tenantId: "t-1" }
    const envelope = envelopeOf(invitations.encode(tenant, [1, "3f1c6f0e-8b5a-4f7e-9a51-2f4f8f3f0a11"]))
    for (const k of [[1e20, envelope.k[1]], [-1, envelope.k[1]], [1.5, envelope.k[1]], [1, "not-a-uuid"], [1], "x"]) {
      refused(invitations.decode(tenant, cursorOf({ ...envelope, k })))
    }
  })

  it("refuses what does not decode: garbage, padding, bad base64url, bad UTF-8, JSON that is no envelope", () => {
    const cursor = applications.encode(scope, "APP-0042")
    for (
      const garbage of [
        "",
        "garbage",
        "!!!!",
        `${cursor}=`,
        `${cursor}.`,
        cursor.slice(0, -1),
        Buffer.from([0xff, 0xfe, 0x7b]).toString("base64url"),
        cursorOf("APP-0042"),
        cursorOf(null),
        cursorOf([1, "applications"]),
        "A".repeat(PageCursorMaxLength + 4)
      ]
    ) {
      refused(applications.decode(scope, garbage))
    }
  })
})

describe("page sizes and pages", () => {
  it("takes the default without a limit and caps a larger one", () => {
    const size = { default: 100, max: 1000 }
    expect([pageLimit(size, undefined), pageLimit(size, 1), pageLimit(size, 1000), pageLimit(size, 1001), pageLimit(size, 1e9)]).toEqual([
      100,
      1,
      1000,
      1000,
      1000
    ])
  })

  it("answers the rows up to the limit, with a cursor after the last one only when the extra row was read", () => {
    const cursor = (last: number) => `after-${last}`
    expect(pageOf([1, 2, 3], 2, cursor)).toEqual({ items: [1, 2], next: Option.some("after-2") })
    expect(pageOf([1, 2], 2, cursor)).toEqual({ items: [1, 2], next: Option.none() })
    expect(pageOf([], 2, cursor)).toEqual({ items: [], next: Option.none() })
  })
})

describe("next page reference", () => {
  it("is relative to the request: its last segment and its query, with the cursor replaced", () => {
    expect(nextPageReference("/api/v1/referentiel/applications?status=ACTIVE&limit=100", "abc")).toBe("applications?status=ACTIVE&limit=100&cursor=abc")
    expect(nextPageReference("/api/v1/referentiel/applications?cursor=old&limit=2&status=ACTIVE", "new")).toBe(
      "applications?limit=2&status=ACTIVE&cursor=new"
    )
    expect(nextPageReference("/api/v1/tenant/invitations/members?%63ursor=old", "new")).toBe("members?cursor=new")
    expect(nextPageReference("/api/v1/referentiel/functions/search?q=a%20b+c&limit=5", "n")).toBe("search?q=a%20b+c&limit=5&cursor=n")
    // A query as node accepts it raw may not close the Link header's <...> and add links of its own.
    const injected = nextPageReference(`/api/v1/referentiel/applications?limit=1&x=>;rel="prev",<https://evil.example/`, "c")
    expect(injected).not.toMatch(/[<>" ]/)
    expect(injected).toBe("applications?limit=1&x=%3E;rel=%22prev%22,%3Chttps://evil.example/&cursor=c")
    expect(nextPageReference("/api/v1/referentiel/functions/search?q=caf\u00e9&limit=2", "c")).toBe("search?q=caf%C3%A9&limit=2&cursor=c")
    expect(nextPageReference("/api/v1/referentiel/functions/by-application/CRM-01?limit=1", "n")).toBe("CRM-01?limit=1&cursor=n")
  })

  it("resolves, against the URL the client called, to the same path under whatever prefix", () => {
    for (const called of ["http://gateway:8080/api/v1/referentiel/applications?limit=2", "https://example.com/portfolio/api/v1/referentiel/applications?limit=2"]) {
      const url = new URL(called)
      const next = new URL(nextPageReference(`${url.pathname}${url.search}`, "c"), url)
      expect(next.href).toBe(`${url.origin}${url.pathname}?limit=2&cursor=c`)
    }
  })

  it("keeps a segment holding ':' from reading as a scheme", () => {
    expect(nextPageReference("/api/v1/x/a:b?limit=1", "c")).toBe("./a:b?limit=1&cursor=c")
  })
})

describe("cursor of a next link", () => {
  it("reads back the cursor nextPageReference wrote into a Link header, and none on the last page", () => {
    const cursor = "eyJrIjpbMTcxOTc5MjAwMDAwMCwiYWJjIl19.x-_"
    const reference = nextPageReference("/admin/pat-requests?tenantId=t&limit=50&cursor=old", cursor)
    expect(cursorOfNextLink(`<${reference}>; rel="next"`)).toEqual(Option.some(cursor))
    expect(cursorOfNextLink(undefined)).toEqual(Option.none())
    expect(cursorOfNextLink('<pat-requests?limit=50>; rel="prev"')).toEqual(Option.none())
  })
})
