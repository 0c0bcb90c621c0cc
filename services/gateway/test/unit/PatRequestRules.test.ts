import { describe, expect, it } from "@effect/vitest"
import { ArbRole, DenyPatRequest, NewPatRequest, PatRequest, PatRequestApprover, widestScopeOf } from "@portfolio/domain"
import { DateTime, Option, Result, Schema } from "effect"
import { checkDecision, deciderOf, recordedDecider, scopeRefusal } from "../../src/domain/PatRequestRules.js"

const tenantId = "4f0c3b2a-1d2e-4f3a-9b8c-7d6e5f4a3b2c"
const justification = "Nightly export of the application list to the CMDB."

const pending = new PatRequest({
  id: "8e7d6c5b-4a3f-4e2d-9c1b-0a9f8e7d6c5b",
  tenantId,
  userSub: "auth0|dev",
  email: "dev@example.com",
  role: "architect",
  scope: "write",
  days: 30,
  justification,
  status: "pending",
  createdAt: DateTime.makeUnsafe("2026-07-01T10:00:00.000Z"),
  expiresAt: DateTime.makeUnsafe("2026-07-31T10:00:00.000Z"),
  decidedAt: null,
  decidedBy: null,
  reason: null,
  patId: null
})

const approver = (overrides: Partial<ConstructorParameters<typeof PatRequestApprover>[0]> = {}) =>
  new PatRequestApprover({ tenantId, userSub: "auth0|admin", email: "admin@example.com", role: "tenant-admin", ...overrides })

/** `tag: detail` of a refusal, or "allowed". */
const verdict = (request: PatRequest, approving: PatRequestApprover | undefined) =>
  Result.match(checkDecision(request, deciderOf("operator:ops", approving)), { onFailure: (e) => `${e._tag}: ${e.detail}`, onSuccess: () => "allowed" })

describe("PAT request rules", () => {
  it("lets a viewer request read only, and every other role read or write", () => {
    expect(Option.map(scopeRefusal("viewer", "write"), (e) => e.detail)).toEqual(
      Option.some("a member with the role 'viewer' may request a token of scope 'read' at most, not 'write'")
    )
    expect(Option.isNone(scopeRefusal("viewer", "read"))).toBe(true)
    for (const role of ArbRole.literals.filter((r) => r !== "viewer")) {
      expect(widestScopeOf(role)).toBe("write")
      expect(Option.isNone(scopeRefusal(role, "write"))).toBe(true)
    }
  })

  it("lets an operator decide any pending request, recording them without an e-mail", () => {
    expect(verdict(pending, undefined)).toBe("allowed")
    expect({ ...recordedDecider(deciderOf("operator:ops", undefined)) }).toEqual({ userSub: "operator:ops", email: null, role: "operator" })
  })

  it("lets a tenant-admin of the tenant decide another member's request, recording who they are", () => {
    expect(verdict(pending, approver())).toBe("allowed")
    expect({ ...recordedDecider(deciderOf("operator:ops", approver())) }).toEqual({ userSub: "auth0|admin", email: "admin@example.com", role: "tenant-admin" })
  })

  it("refuses a tenant-admin their own request, and any other role, with 403", () => {
    expect(verdict(new PatRequest({ ...pending, role: "tenant-admin", userSub: "auth0|admin" }), approver())).toBe(
      "InsufficientScope: a tenant-admin may not decide their own PAT request: another tenant-admin or an operator decides it"
    )
    expect(verdict(pending, approver({ role: "architect" }))).toBe(
      "InsufficientScope: deciding a PAT request requires the role 'tenant-admin' in the tenant; the approver has 'architect'"
    )
  })

  it("answers a member of another tenant as if the request did not exist", () => {
    expect(verdict(pending, approver({ tenantId: "00000000-1111-4222-8333-444444444444" }))).toBe(
      `NotFound: No PAT request has the id ${pending.id}.`
    )
  })

  it("refuses to decide a request twice (409), after checking who decides", () => {
    const decided = new PatRequest({ ...pending, status: "denied" })
    expect(verdict(decided, undefined)).toBe(`Conflict: PAT request ${pending.id} is denied: only a pending request can be approved or denied.`)
    expect(verdict(decided, approver({ role: "viewer" }))).toMatch(/^InsufficientScope/)
  })
})

describe("PAT request input", () => {
  const decode = Schema.decodeUnknownResult(NewPatRequest)
  const input = { tenantId, userSub: "auth0|dev", email: "dev@example.com", role: "architect", scope: "read", justification }

  it("trims the justification, takes 20 to 2000 characters of it, and defaults the lifetime to 90 days", () => {
    const decoded = Result.getOrThrow(decode({ ...input, justification: `  ${"x".repeat(20)}\n` }))
    expect(decoded.justification).toBe("x".repeat(20))
    expect(decoded.days).toBe(90)
    expect(Result.isSuccess(decode({ ...input, justification: "x".repeat(2000) }))).toBe(true)
    for (const bad of [`   ${"x".repeat(19)}   `, "x".repeat(2001), `${"x".repeat(20)}\u0000`]) {
      expect(Result.isFailure(decode({ ...input, justification: bad }))).toBe(true)
    }
    const tooShort = Result.getFailure(decode({ ...input, justification: "too short" }))
    expect(Option.map(tooShort, (e) => e.message)).toEqual(Option.some(expect.stringContaining("the justification must be 20 to 2000 characters long once trimmed (got 9)")))
  })

  it("takes 1 to 366 days", () => {
    expect(Result.isSuccess(decode({ ...input, days: 366 }))).toBe(true)
    expect(Result.isSuccess(decode({ ...input, days: 1 }))).toBe(true)
    expect(Result.isFailure(decode({ ...input, days: 367 }))).toBe(true)
    expect(Result.isFailure(decode({ ...input, days: 0 }))).toBe(true)
  })

  it("takes a denial's reason of 1 to 500 characters once trimmed", () => {
    const deny = Schema.decodeUnknownResult(DenyPatRequest)
    expect(Result.map(deny({ reason: "  Use the read token of the team.  " }), (d) => d.reason)).toEqual(Result.succeed("Use the read token of the team."))
    expect(Result.isFailure(deny({ reason: "   " }))).toBe(true)
    expect(Result.isFailure(deny({ reason: "x".repeat(501) }))).toBe(true)
    expect(Result.isFailure(deny({}))).toBe(true)
  })
})
