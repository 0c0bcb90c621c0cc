import { Application } from "@portfolio/domain"
import { Effect, Schema } from "effect"
import { listApplicationChanges } from "../../src/usecases/ApplicationQueries.js"

export const encode = Schema.encodeSync(Application)
const epoch = "1970-01-01T00:00:00.000Z"

/** The body of an application with nothing but a name: every default, every derivation empty. */
export const minimal = (code: string, name: string) => ({
  code,
  name,
  description: null,
  parentCode: null,
  status: "ACTIVE",
  dataClassification: "INTERNAL",
  criticality: "NOMINAL",
  rtoHours: null,
  rpoHours: null,
  regulations: "",
  roleAssignments: "",
  licenseCost: null,
  supportCost: null,
  infraCost: null,
  staffCost: null,
  annualCost: null,
  applicationVip: false,
  contactIT: null,
  contactMetier: null,
  createdAt: epoch,
  updatedAt: epoch
})

/** The tracked changes of an application, newest first, without their ids, authors and times. */
export const changesOf = (tenantId: string, code: string) =>
  Effect.map(listApplicationChanges(tenantId, code, 200), (entries) =>
    entries.map(({ field, newValue, oldValue }) => ({ field, oldValue, newValue })))
