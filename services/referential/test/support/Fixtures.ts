import { ApplicationInput, FunctionInput } from "@portfolio/domain"
import { DateTime, Logger, References } from "effect"
import type { ApplicationRecord } from "../../src/domain/ApplicationRecord.js"

export const tenantA = "11111111-1111-4111-8111-111111111111"
export const tenantB = "22222222-2222-4222-8222-222222222222"

/** Builds a PUT body the way the HTTP layer would after decoding it. */
export const appInput = (fields: Partial<ApplicationInput> & { readonly name: string }) => new ApplicationInput(fields)
export const fnInput = (fields: Partial<FunctionInput> & { readonly code: string; readonly name: string }) => new FunctionInput(fields)

/** A stored application with every default, for the ports themselves. */
export const applicationRecord = (code: string, fields: Partial<ApplicationRecord> = {}): ApplicationRecord => ({
  code,
  name: code,
  description: null,
  parentCode: null,
  status: "ACTIVE",
  dataClassification: "INTERNAL",
  criticality: "NOMINAL",
  rtoHours: null,
  rpoHours: null,
  regulations: [],
  roleAssignments: [],
  licenseCost: null,
  supportCost: null,
  infraCost: null,
  staffCost: null,
  legacyAnnualCost: null,
  revision: 1,
  createdAt: DateTime.makeUnsafe(0),
  updatedAt: DateTime.makeUnsafe(0),
  ...fields
})

export interface CapturedLog {
  readonly level: string
  readonly message: string
  readonly annotations: Record<string, unknown>
}

/** A logger layer that records every log line into `into`. */
export const capturingLogger = (into: Array<CapturedLog>) =>
  Logger.layer([
    Logger.make(({ fiber, logLevel, message }) => {
      into.push({
        // The level as log lines name it ("Warn" is WARN).
        level: logLevel.toUpperCase(),
        message: Array.isArray(message) ? message.join(" ") : String(message),
        annotations: { ...fiber.getRef(References.CurrentLogAnnotations) }
      })
    })
  ])
