import { describe, expect, it } from "@effect/vitest"
import { InvalidRegulation, InvalidRequest } from "@portfolio/domain"
import { Effect, Result } from "effect"
import { parseRegulations, renderRegulations } from "../../src/domain/Regulations.js"
import { parseRoleAssignments, renderRoleAssignments, replaceRole } from "../../src/domain/RoleAssignments.js"

describe("regulations", () => {
  it.effect("keeps known tokens trimmed, once each, in the catalogue's order", () =>
    Effect.gen(function*() {
      const tokens = yield* parseRegulations(" ISO_27001 ,DORA,, NIS2,DORA ")
      expect(tokens).toEqual(["DORA", "NIS2", "ISO_27001"])
      expect(renderRegulations(tokens)).toBe("DORA,NIS2,ISO_27001")
      expect(yield* parseRegulations("")).toEqual([])
    }))

  it.effect.each([
    ["DORA,SOX", "SOX"],
    ["dora", "dora"],
    ["NIS2,GDPR,DORA", "GDPR"],
    ["DORA NIS2", "DORA NIS2"]
  ] as const)("refuses %s, naming the token %s", ([text, token]) =>
    Effect.gen(function*() {
      const result = yield* Effect.result(parseRegulations(text))
      expect(result).toEqual(
        Result.fail(new InvalidRegulation({ detail: `Unknown regulation token '${token}'. Allowed tokens (case-sensitive): DORA, NIS2, RGPD, PCI_DSS, HDS, ISO_27001.` }))
      )
    }))
})

describe("role assignments", () => {
  it.effect("reads ROLE:contact pairs in their order, trimmed, without repeats", () =>
    Effect.gen(function*() {
      const pairs = yield* parseRoleAssignments(" TECH_LEAD : tom@x.example ,PRODUCT_OWNER:paula@x.example,TECH_LEAD:tom@x.example, ARCHITECT:urn:arch:1")
      expect(pairs).toEqual([
        { role: "TECH_LEAD", contact: "tom@x.example" },
        { role: "PRODUCT_OWNER", contact: "paula@x.example" },
        { role: "ARCHITECT", contact: "urn:arch:1" }
      ])
      expect(renderRoleAssignments(pairs)).toBe("TECH_LEAD:tom@x.example,PRODUCT_OWNER:paula@x.example,ARCHITECT:urn:arch:1")
    }))

  it.effect.each(["CTO:bob", "tech_lead:bob", "TECH_LEAD", "TECH_LEAD:", ":bob"])("refuses %s with InvalidRequest", (text) =>
    Effect.gen(function*() {
      const result = yield* Effect.flip(parseRoleAssignments(text))
      expect(result).toBeInstanceOf(InvalidRequest)
      expect(result.detail).toContain(`'${text.trim()}'`)
    }))

  it("replaces every pair of one role, or removes them", () => {
    const pairs = [
      { role: "TECH_LEAD", contact: "a" },
      { role: "PRODUCT_OWNER", contact: "b" },
      { role: "TECH_LEAD", contact: "c" }
    ] as const
    expect(replaceRole(pairs, "TECH_LEAD", "d")).toEqual([{ role: "PRODUCT_OWNER", contact: "b" }, { role: "TECH_LEAD", contact: "d" }])
    expect(replaceRole(pairs, "TECH_LEAD", null)).toEqual([{ role: "PRODUCT_OWNER", contact: "b" }])
  })
})
