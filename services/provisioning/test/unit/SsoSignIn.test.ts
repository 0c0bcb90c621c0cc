import { describe, expect, it } from "vitest"
import { domainOf, roleFromClaims, verifiedBy } from "../../src/domain/SsoSignIn.js"

const connection = {
  roleClaim: "groups",
  roleMap: [{ value: "EA Team", role: "architect" as const }, { value: "Admins", role: "tenant-admin" as const }],
  defaultRole: "viewer" as const
}

describe("the role of a first sign-in through a provider", () => {
  it("is the first mapping, in the connection's order, whose value the claim holds", () => {
    expect(roleFromClaims(connection, { groups: ["Admins", "EA Team"] })).toBe("architect")
    expect(roleFromClaims(connection, { groups: ["Everyone", "Admins"] })).toBe("tenant-admin")
    expect(roleFromClaims(connection, { groups: "EA Team" })).toBe("architect")
  })

  it("is the default role without a claim, without a match, or with a claim that is no string", () => {
    expect(roleFromClaims(connection, {})).toBe("viewer")
    expect(roleFromClaims(connection, { groups: ["Everyone"] })).toBe("viewer")
    expect(roleFromClaims(connection, { groups: [{ name: "Admins" }], other: "Admins" })).toBe("viewer")
    expect(roleFromClaims({ ...connection, roleClaim: null, defaultRole: "contributor" }, { groups: ["Admins"] })).toBe("contributor")
  })

  it("compares e-mail domains in lower case, after the last @", () => {
    expect(domainOf("Ana.Lopez@ACME.Example")).toBe("acme.example")
    expect(domainOf("\"a@b\"@acme.example")).toBe("acme.example")
  })
})

describe("the e-mail-verified claim", () => {
  it("says verified with true, and with the string or number forms of providers' own claims; nothing else does", () => {
    for (const value of [true, "true", 1]) expect(verifiedBy(value), String(value)).toBe(true)
    for (const value of [false, "false", 0, "1", "yes", null, undefined, {}, [true]]) expect(verifiedBy(value), JSON.stringify(value)).toBe(false)
  })
})
