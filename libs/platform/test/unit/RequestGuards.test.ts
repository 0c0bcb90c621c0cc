import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import {
  exceedsJsonDepth,
  isJsonContentType,
  declaredSizeRefusal,
  jsonTextRefusal,
  MaxBodyBytes,
  MaxJsonDepth,
  mediaTypeRefusal,
  PathRefusals,
  pathRefusal,
  targetParts
} from "../../src/http/RequestGuards.js"

describe("targetParts", () => {
  it.each([
    ["/api/v1/x?q=1", "/api/v1/x", "?q=1"],
    ["/a/../b", "/a/../b", ""],
    ["//elsewhere/x", "//elsewhere/x", ""],
    ["http://gateway/api/v1/x?y", "/api/v1/x", "?y"],
    ["https://gateway:8080", "/", ""],
    ["http://gateway?y", "/", "?y"],
    ["*", "*", ""]
  ])("reads %s as sent", (target, path, search) => {
    expect(targetParts(target)).toEqual({ path, search })
  })
})

describe("pathRefusal", () => {
  it.each([
    "/",
    "/api/v1/tenant/invitations/members/auth0|0123",
    "/api/v1/tenant/invitations/members/auth0%7C0123",
    "/api/v1/x/%C3%A9t%C3%A9",
    "/api/v1/x/a%3Bb",
    "/api/v1/x/a.b",
    "/api/v1/x/...",
    "/api/v1/x/~!$&'()*+,=:@",
    "//elsewhere/x"
  ])("takes %s", (path) => {
    expect(pathRefusal(path)).toBeUndefined()
  })

  it.each([
    ["api/v1", PathRefusals.notAPath],
    ["*", PathRefusals.notAPath],
    ["/api/v1/x;jsessionid=1", PathRefusals.semicolon],
    ["/api/v1/x/;/y", PathRefusals.semicolon],
    ["/api/v1/./x", PathRefusals.dotSegment],
    ["/api/v1/x/..", PathRefusals.dotSegment],
    ["/api/v1/%2e%2e/x", PathRefusals.dotSegment],
    ["/api/v1/%2E/x", PathRefusals.dotSegment],
    ["/api/v1/.%2E/x", PathRefusals.dotSegment],
    ["/api/v1/x/a%2Fb", PathRefusals.encodedSlash],
    ["/api/v1/x/a%2fb", PathRefusals.encodedSlash],
    ["/api/v1\\x", PathRefusals.backslash],
    ["/api/v1/%5C", PathRefusals.backslash],
    ["/api/v1/%5c", PathRefusals.backslash],
    // Escapes of unreserved characters: the router would decode a literal segment the gateway compares as sent.
    ["/api/v1/referentiel/functions/%73tats", PathRefusals.escapedUnreserved],
    ["/api/v1/x/a%2eb", PathRefusals.escapedUnreserved],
    ["/api/v1/x/%7E", PathRefusals.escapedUnreserved],
    ["/api/v1/%", PathRefusals.badEscape],
    ["/api/v1/%zz", PathRefusals.badEscape],
    ["/api/v1/%E0%A4%A", PathRefusals.badEscape],
    ["/api/v1/a b", PathRefusals.unencoded],
    ["/api/v1/a\"b", PathRefusals.unencoded],
    ["/api/v1/{x}", PathRefusals.unencoded],
    ["/api/v1/x#frag", PathRefusals.unencoded],
    ["/api/v1/\u00e9", PathRefusals.unencoded],
    ["/api/v1/\u0000", PathRefusals.unencoded]
  ])("refuses %s", (path, reason) => {
    expect(pathRefusal(path)).toBe(reason)
  })

  const anyChar = fc.oneof(
    fc.constantFrom("/", ".", "%", ";", "\\", "2", "e", "E", "f", "F", "c", "C", "5", "|", "[", "#", " ", "\u00e9", "\u0001", "a", "~"),
    fc.string({ minLength: 1, maxLength: 1, unit: "binary" })
  )

  it("takes only paths that URL parsers leave as they are: what the gateway checks is what the service routes", () => {
    fc.assert(
      fc.property(fc.array(anyChar, { maxLength: 24 }).map((chars) => `/${chars.join("")}`), (path) => {
        if (pathRefusal(path) === undefined) expect(new URL(`http://gateway.invalid${path}`).pathname).toBe(path)
      }),
      { numRuns: 2000, examples: [["/a/%2e%2e/b"], ["/a/.%2e"], ["/a\\b"], ["/a/%2F"]] }
    )
  })

  it("takes any percent-encoded parameter, unless it holds a slash or a backslash, or is a dot segment", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 20 }), (value) => {
        const refused = pathRefusal(`/api/v1/tenant/invitations/members/${encodeURIComponent(value)}`) !== undefined
        expect(refused).toBe(/[/\\]/.test(value) || value === "." || value === "..")
      }),
      { numRuns: 1000, examples: [["."], [".."], ["a/b"], ["a\\b"], ["a;b"], ["auth0|1"]] }
    )
  })
})

describe("isJsonContentType", () => {
  it.each(["application/json", "Application/JSON", "application/json; charset=utf-8", "application/json;charset=\"UTF-8\"", "application/json;"])(
    "takes %s",
    (contentType) => {
      expect(isJsonContentType(contentType)).toBe(true)
    }
  )
  it.each([
    undefined,
    "",
    "application/x-www-form-urlencoded",
    "text/plain",
    "text/json",
    "multipart/form-data; boundary=x",
    "application/merge-patch+json",
    "application/problem+json",
    "application/jsonx",
    "application/json; charset=iso-8859-1",
    "application/json; charset",
    "text/plain; x=application/json"
  ])("refuses %s", (contentType) => {
    expect(isJsonContentType(contentType)).toBe(false)
  })
})

describe("exceedsJsonDepth", () => {
  const depthOf = (value: unknown): number =>
    value !== null && typeof value === "object" ? 1 + Math.max(0, ...Object.values(value).map(depthOf)) : 0

  it("agrees with the depth of any JSON value", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.integer({ min: 0, max: 7 }), (value, max) => {
        expect(exceedsJsonDepth(JSON.stringify(value), max)).toBe(depthOf(value) > max)
      }),
      { numRuns: 500 }
    )
  })

  it.each([
    ["[".repeat(3000) + "]".repeat(3000), true],
    ["[".repeat(MaxJsonDepth) + "]".repeat(MaxJsonDepth), false],
    ["[".repeat(MaxJsonDepth + 1) + "]".repeat(MaxJsonDepth + 1), true],
    [`{"email":"${"[".repeat(3000)}","arbRole":"viewer"}`, false],
    [`{"a":"\\"${"{".repeat(100)}"}`, false],
    [`["\\\\", ${"[".repeat(MaxJsonDepth)}]`, true],
    ["]]]]]]", false]
  ])("reads brackets outside strings only (%#)", (text, deeper) => {
    expect(exceedsJsonDepth(text, MaxJsonDepth)).toBe(deeper)
  })
})

describe("the body refusals", () => {
  it("refuses a declared size over the limit, up to which any size passes", () => {
    expect(declaredSizeRefusal({ "content-length": String(MaxBodyBytes + 1) })?.errorCode).toBe("PAYLOAD_TOO_LARGE")
    expect(declaredSizeRefusal({ "content-length": String(MaxBodyBytes) })).toBeUndefined()
    expect(declaredSizeRefusal({ "transfer-encoding": "chunked" })).toBeUndefined()
  })

  it("refuses a body that is not JSON with 415, naming what was sent", () => {
    expect(mediaTypeRefusal({ "content-length": "10", "content-type": "application/x-www-form-urlencoded" })).toEqual({
      errorCode: "UNSUPPORTED_MEDIA_TYPE",
      detail: "This endpoint takes application/json, not 'application/x-www-form-urlencoded'."
    })
    expect(mediaTypeRefusal({ "transfer-encoding": "chunked" })).toEqual({
      errorCode: "UNSUPPORTED_MEDIA_TYPE",
      detail: "The request body has no Content-Type; this endpoint takes application/json."
    })
    expect(mediaTypeRefusal({ "content-type": "application/json; charset=utf-8" })).toBeUndefined()
  })

  it("refuses a text nested too deep with 400", () => {
    expect(jsonTextRefusal("[".repeat(100))?.errorCode).toBe("INVALID_REQUEST")
    expect(jsonTextRefusal(JSON.stringify({ email: "a@b.c", arbRole: "viewer" }))).toBeUndefined()
  })
})
