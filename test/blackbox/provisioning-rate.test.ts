import { beforeAll, describe, expect, it } from "vitest"
import type { Reply } from "../support/http.js"
import { expectProblem } from "../support/problem.js"
import { invite, invitationsPath } from "../support/provisioning.js"
import type { CreatedPat, CreatedTenant } from "../support/system.js"
import { useSystem } from "../support/useSystem.js"

// A system of its own: the hourly invitation limit of this file must not touch the others.
const system = useSystem({ INVITATIONS_PER_TENANT_PER_HOUR: "5" })

let tenant: CreatedTenant
let other: CreatedTenant
let admin: CreatedPat
let otherAdmin: CreatedPat

beforeAll(async () => {
  ;[tenant, other] = await Promise.all([system.createTenant("bb-rate"), system.createTenant("bb-rate-other")])
  ;[admin, otherAdmin] = await Promise.all([system.createPat(tenant, "write"), system.createPat(other, "write")])
}, 120_000)

/** Retry-After is X-RateLimit-Reset minus now, rounded up (within 1 s), and nothing remains (docs/product-rules.md#invitations-and-members). */
const expectRefusingLimitHeaders = (reply: Reply, nowSeconds: number) => {
  const retryAfter = Number(reply.headers.get("retry-after"))
  const reset = Number(reply.headers.get("x-ratelimit-reset"))
  expect({
    consistent: Math.abs(retryAfter - Math.max(1, Math.ceil(reset - nowSeconds))) <= 1,
    remaining: reply.headers.get("x-ratelimit-remaining")
  }, `retry-after ${reply.headers.get("retry-after")}, x-ratelimit-reset ${reset}, now ${nowSeconds}`).toEqual({ consistent: true, remaining: "0" })
}

describe("invitations per tenant per hour (INVITATIONS_PER_TENANT_PER_HOUR=5)", () => {
  it("answers the 6th new invitation within the hour with 429 problem+json, Retry-After and X-RateLimit-Reset", async () => {
    for (let n = 1; n <= 5; n++) {
      const reply = await invite(system, admin, `person${n}@bb-rate.example`, "viewer")
      expect(reply.status, reply.text).toBe(201)
    }
    const sixth = await invite(system, admin, "person6@bb-rate.example", "viewer")
    const now = Date.now() / 1000
    expectProblem(sixth, "RATE_LIMITED", `/api/v1${invitationsPath}`)
    const retryAfter = Number(sixth.headers.get("retry-after"))
    const reset = Number(sixth.headers.get("x-ratelimit-reset"))
    // The first invitation leaves the one-hour window in (just under) an hour.
    expect({
      retryAfter: Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 3600,
      reset: Number.isInteger(reset) && reset > now && reset <= Math.ceil(now) + 3600
    }, `retry-after ${sixth.headers.get("retry-after")}, x-ratelimit-reset ${sixth.headers.get("x-ratelimit-reset")}`).toEqual({ retryAfter: true, reset: true })
    // The headers describe the limit that refused (the hourly one), not the gateway's per-token minute.
    expectRefusingLimitHeaders(sixth, now)
    expect(sixth.headers.get("x-ratelimit-limit")).toBe("5")

    const list = await system.api(admin.token).get(invitationsPath)
    // The admin's welcome link, made with the tenant, is listed last and took none of the 5.
    expect(list.body.map((i: any) => i.email)).toEqual([...[5, 4, 3, 2, 1].map((n) => `person${n}@bb-rate.example`), tenant.adminEmail])
  })

  it("keeps refusing new invitations within the hour, tells a duplicate apart, and counts per tenant", async () => {
    const seventh = await invite(system, admin, "person7@bb-rate.example", "architect")
    expectProblem(seventh, "RATE_LIMITED", `/api/v1${invitationsPath}`)
    expectRefusingLimitHeaders(seventh, Date.now() / 1000)
    // A duplicate is no new invitation: what it is told is that the person is invited already.
    expectProblem(await invite(system, admin, "person1@bb-rate.example", "architect"), "ALREADY_INVITED", `/api/v1${invitationsPath}`)
    // Still a 400 for a bad request: the limit counts new invitations only.
    expectProblem(await invite(system, admin, "not-an-email", "viewer"), "INVALID_INVITATION_PARAM", `/api/v1${invitationsPath}`)
    const elsewhere = await invite(system, otherAdmin, "person6@bb-rate.example", "viewer")
    expect(elsewhere.status, elsewhere.text).toBe(201)
  })

  it("does not give back a slot when an invitation is revoked (the limit is on invitations sent)", async () => {
    const list = await system.api(admin.token).get(invitationsPath)
    const revoked = await system.api(admin.token).del(`${invitationsPath}/${list.body[0].id}`)
    expect(revoked.status).toBe(204)
    expectProblem(await invite(system, admin, "person8@bb-rate.example", "viewer"), "RATE_LIMITED", `/api/v1${invitationsPath}`)
  })
})
