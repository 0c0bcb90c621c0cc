import { describe, expect, it } from "@effect/vitest"
import { DateTime, Equal, Hash, Schema } from "effect"
import { Application, CallerIdentity, ChangeLogEntry } from "../src/index.js"
import { trusted } from "../src/Wire.js"

const application = {
  code: "APP-1",
  name: "Payments",
  description: null,
  parentCode: null,
  status: "ACTIVE",
  dataClassification: "CONFIDENTIAL",
  criticality: "MISSION_CRITICAL",
  rtoHours: 4,
  rpoHours: 1,
  regulations: "DORA,PCI_DSS",
  roleAssignments: "TECH_LEAD:lead@example.test",
  licenseCost: 1000,
  supportCost: null,
  infraCost: 250,
  staffCost: null,
  annualCost: 1250,
  applicationVip: true,
  contactIT: "lead@example.test",
  contactMetier: null,
  createdAt: DateTime.makeUnsafe("2026-01-02T03:04:05.006Z"),
  updatedAt: DateTime.makeUnsafe("2026-02-03T04:05:06.007Z")
} as const

const cases = [
  ["Application", Application, application],
  ["CallerIdentity", CallerIdentity, { tenantId: "7d0c2f4e-3c1a-4b7e-9f55-2a6f1b0c9d11", subject: "user-1", role: "viewer", scope: "read" }],
  ["ChangeLogEntry", ChangeLogEntry, {
    id: "0b6a4ad8-4a4f-4b58-9a9c-7a8d2f6f7e10",
    applicationCode: "APP-1",
    field: "criticality",
    oldValue: "LOW",
    newValue: "IMPORTANT",
    changedBy: "user-1",
    changedAt: DateTime.makeUnsafe("2026-01-02T03:04:05.006Z")
  }]
] as const

describe("trusted", () => {
  for (const [name, Class, fields] of cases) {
    it(`makes a ${name} that is what its constructor makes`, () => {
      const made = new (Class as any)(fields)
      const fast = trusted(Class as any, fields as any)
      expect(fast).toBeInstanceOf(Class)
      expect(Object.getPrototypeOf(fast)).toBe(Object.getPrototypeOf(made))
      expect(Reflect.ownKeys(fast)).toEqual(Reflect.ownKeys(made))
      expect(Schema.is(Class as any)(fast)).toBe(true)
      expect(Equal.equals(fast, made)).toBe(true)
      expect(Hash.hash(fast)).toBe(Hash.hash(made))
      expect(JSON.stringify(fast)).toBe(JSON.stringify(made))
      expect(String(fast)).toBe(String(made))
      const encode = Schema.encodeUnknownSync(Schema.toCodecJson(Class as Schema.Codec<unknown, unknown>))
      expect(JSON.stringify(encode(fast))).toBe(JSON.stringify(encode(made)))
    })
  }
})
