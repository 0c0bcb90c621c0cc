import { describe, expect, it } from "@effect/vitest"
import { sameToken, sessionEndMs, sessionIdHash, shouldTouch } from "../../src/domain/SessionRules.js"
import { admitAttempt, emailKey, minutesToWait, usableMemberships } from "../../src/domain/SignInRules.js"

const policy = { maxFailuresPerEmail: 5, maxFailuresPerAddress: 50, windowMs: 15 * 60_000 }
const none = { emailFailures: 0, latestEmailFailureMs: undefined, addressFailures: 0, latestAddressFailureMs: undefined }

describe("sign-in rules", () => {
  it("admits up to the allowance and locks from the 5th failure until the window after the latest one", () => {
    expect(admitAttempt(policy, { ...none, emailFailures: 4, latestEmailFailureMs: 0 }, 1_000)._tag).toBe("Admitted")
    expect(admitAttempt(policy, { ...none, emailFailures: 5, latestEmailFailureMs: 60_000 }, 120_000)).toEqual({ _tag: "Locked", retryAfterMs: 14 * 60_000 })
    expect(admitAttempt(policy, { ...none, addressFailures: 50, latestAddressFailureMs: 0 }, 0)).toEqual({ _tag: "Locked", retryAfterMs: policy.windowMs })
  })

  it("compares e-mails case-insensitively and tells minutes rounded up", () => {
    expect(emailKey("  Alice@ACME.test ")).toBe("alice@acme.test")
    expect(minutesToWait(60_001)).toBe(2)
    expect(minutesToWait(1)).toBe(1)
  })
})

describe("the workspaces a session may act in", () => {
  const account = {
    memberships: [{ tenantId: "a" }, { tenantId: "b" }, { tenantId: "c" }],
    ssoOnlyTenantIds: ["b", "c"]
  }
  it("with a password: all but those whose single sign-on is required", () => {
    expect(usableMemberships(account, null)).toEqual([{ tenantId: "a" }])
    expect(usableMemberships({ ...account, ssoOnlyTenantIds: [] }, null)).toEqual(account.memberships)
  })
  it("through a tenant's provider: that tenant only, required or not, and none when the person left it", () => {
    expect(usableMemberships(account, "b")).toEqual([{ tenantId: "b" }])
    expect(usableMemberships(account, "a")).toEqual([{ tenantId: "a" }])
    expect(usableMemberships(account, "z")).toEqual([])
  })
})

describe("session rules", () => {
  const sessionPolicy = { absoluteMs: 8 * 3_600_000, idleMs: 30 * 60_000 }

  it("ends a session at whichever comes first: 8 hours after sign-in or 30 minutes idle", () => {
    expect(sessionEndMs(sessionPolicy, 0, 0)).toBe(30 * 60_000)
    expect(sessionEndMs(sessionPolicy, 0, 8 * 3_600_000 - 60_000)).toBe(8 * 3_600_000)
    expect(shouldTouch(0, 59_999)).toBe(false)
    expect(shouldTouch(0, 60_000)).toBe(true)
  })

  it("stores ids as SHA-256 and compares tokens exactly", () => {
    expect(sessionIdHash("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    expect(sameToken("abc", "abc")).toBe(true)
    expect(sameToken("abd", "abc")).toBe(false)
    expect(sameToken("ab", "abc")).toBe(false)
    expect(sameToken(undefined, "abc")).toBe(false)
  })
})

describe("the pages' route templates", () => {
  it("names each page by its template, and anything else under /console by one name", async () => {
    const { consoleRoute } = await import("../../src/adapters/http/ConsolePages.js")
    expect(consoleRoute("/console/tokens")).toBe("/console/tokens")
    expect(consoleRoute("/console/admin/webhooks/0b13bb14-4b3f-45a4-af97-d5b76ac55fbe/deliveries/92109815-b81d-4d96-b66c-5017310114f3")).toBe(
      "/console/admin/webhooks/{id}/deliveries/{deliveryId}"
    )
    expect(consoleRoute("/console/admin/members/oidc%7Cabc/remove")).toBe("/console/admin/members/{userSub}/remove")
    expect(consoleRoute("/console/admin/scim/0b13bb14-4b3f-45a4-af97-d5b76ac55fbe/revoke")).toBe("/console/admin/scim/{id}/revoke")
    expect(consoleRoute("/console/sso")).toBe("/console/sso")
    expect(consoleRoute("/console/sso/acme-corp")).toBe("/console/sso/{slug}")
    expect(consoleRoute("/console/sso/acme-corp/callback")).toBe("/console/sso/{slug}/callback")
    expect(consoleRoute("/console/sso/Acme/callback")).toBe("/console/*")
    expect(consoleRoute("/console/wp-admin/setup.php")).toBe("/console/*")
    expect(consoleRoute("/console/admin/webhooks/not-a-uuid")).toBe("/console/*")
    expect(consoleRoute("/consolex")).toBeUndefined()
    expect(consoleRoute("/api/v1/x")).toBeUndefined()
  })
})
