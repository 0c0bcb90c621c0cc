import { PartnerClientId } from "@portfolio/domain"
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { newPartnerClientId } from "../../src/domain/PartnerClient.js"

const isClientId = Schema.is(PartnerClientId)

describe("partner client ids", () => {
  it("are service-partner-<name>-<8 lowercase letters or digits>, a new suffix each time", () => {
    const ids = Array.from({ length: 200 }, () => newPartnerClientId("acme-erp"))
    for (const id of ids) {
      expect(id).toMatch(/^service-partner-acme-erp-[0-9a-z]{8}$/)
      expect(isClientId(id)).toBe(true)
    }
    expect(new Set(ids).size).toBe(ids.length)
  })

  it("draw every character of the suffix alike, skipping the bytes that would favour the first ones", () => {
    // 252 and above are dropped; 0 and 36 both give "0", 35 and 251 both give "z".
    const bytes = [255, 252, 0, 36, 35, 251, 1, 37, 10, 46]
    expect(newPartnerClientId("x", () => Uint8Array.from(bytes))).toBe("service-partner-x-00zz11aa")
  })

  it("keep the grammar for the longest name, and accept the ids made before the suffix", () => {
    const longest = "a".repeat(40)
    expect(isClientId(newPartnerClientId(longest))).toBe(true)
    expect(isClientId("service-partner-acme-erp")).toBe(true)
    for (const bad of ["service-partner-", "service-partner-Acme", "service-partner-acme-", `service-partner-${"a".repeat(51)}`, "partner-acme"]) {
      expect(isClientId(bad)).toBe(false)
    }
  })
})
