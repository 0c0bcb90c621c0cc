import {
  type ApplicationStatus,
  type AssignmentRole,
  AssignmentRoles,
  type Criticality,
  type DataClassification,
  type RegulationToken,
  RegulationTokens
} from "@portfolio/domain"
import type { ApplicationRecord, RoleAssignment } from "../domain/ApplicationRecord.js"
import type { FunctionFields, FunctionLink } from "../domain/FunctionRecord.js"
import type { DateTime } from "effect"
import { createHash } from "node:crypto"

export interface DemoSize {
  readonly applications: number
  readonly functions: number
  readonly maxDepth: number
  readonly seed: number
}

export interface DemoReferential {
  /** Parents before their children. */
  readonly applications: ReadonlyArray<ApplicationRecord>
  /** Parents before their children. */
  readonly functions: ReadonlyArray<FunctionFields>
  readonly links: ReadonlyArray<FunctionLink>
}

/** mulberry32: small, fast and good enough for demo data; the same seed gives the same data. */
const prng = (seed: number) => {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (bound: number) => Math.floor(next() * bound)
  const pick = <A>(values: ReadonlyArray<A>): A => values[int(values.length)]!
  const chance = (p: number) => next() < p
  return { int, pick, chance }
}

/** Stable ids: the same tenant and seed give the same ids, other tenants get other ids. */
const demoId = (tenantId: string, seed: number, index: number): string => {
  const hex = createHash("sha256").update(`${tenantId}:${seed}:function:${index}`).digest("hex")
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16)
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

const statuses: ReadonlyArray<ApplicationStatus> = ["ACTIVE", "PLANNED", "DEPRECATED", "RETIRED"]
const classifications: ReadonlyArray<DataClassification> = ["PUBLIC", "INTERNAL", "CONFIDENTIAL", "RESTRICTED"]
const criticalities: ReadonlyArray<Criticality> = ["MISSION_CRITICAL", "IMPORTANT", "NOMINAL", "LOW"]
const hours = [0.25, 0.5, 1, 2, 4, 8, 12, 24, 48, 72, 168]
const domains = [
  "Customer", "Billing", "Payment", "Ledger", "Claims", "Policy", "Risk", "Treasury", "Payroll", "Inventory",
  "Logistics", "Procurement", "Analytics", "Identity", "Document", "Notification", "Pricing", "Trading", "Compliance", "Marketing"
]
const kinds = ["Portal", "Engine", "Hub", "Gateway", "Service", "Platform", "Manager", "Warehouse", "Tracker", "Console"]
const people = ["alice", "bruno", "chloe", "david", "emma", "farid", "gina", "hugo", "ines", "jules", "karim", "lea"]
const surnames = ["martin", "bernard", "dubois", "thomas", "robert", "petit", "durand", "leroy", "moreau", "simon"]
const verbs = ["Manage", "Plan", "Monitor", "Execute", "Report on", "Control", "Analyse", "Settle", "Onboard", "Archive"]
const objects = [
  "customers", "contracts", "payments", "risks", "suppliers", "products", "orders", "invoices", "employees", "assets", "claims", "campaigns"
]

/** The i-th value for the first items, so every value appears; weighted random afterwards. */
const cover = <A>(index: number, values: ReadonlyArray<A>, otherwise: () => A): A =>
  index < values.length ? values[index]! : otherwise()

const pad = (n: number, width: number) => String(n).padStart(width, "0")

const makeApplications = (size: DemoSize, rnd: ReturnType<typeof prng>, now: DateTime.Utc): Array<ApplicationRecord> => {
  const width = Math.max(4, String(size.applications).length)
  const contact = () => `${rnd.pick(people)}.${rnd.pick(surnames)}@example.com`
  const records: Array<ApplicationRecord> = []
  const rootCodes: Array<string> = []
  for (let i = 0; i < size.applications; i++) {
    const code = `APP-${pad(i + 1, width)}`
    const parentCode = i === 1 ? rootCodes[0]! : i > 1 && rootCodes.length > 0 && rnd.chance(0.1) ? rnd.pick(rootCodes) : null
    if (parentCode === null) rootCodes.push(code)

    const regulations: Array<RegulationToken> = i < RegulationTokens.length
      ? [RegulationTokens[i]!]
      : RegulationTokens.filter(() => rnd.chance(0.2))
    const roles: Array<AssignmentRole> = i < AssignmentRoles.length
      ? [AssignmentRoles[i]!]
      : rnd.chance(0.15) ? [] : AssignmentRoles.filter(() => rnd.chance(0.35))
    const roleAssignments: Array<RoleAssignment> = roles.map((role) => ({ role, contact: contact() }))
    // A second TECH_LEAD now and then: contactIT reads the first one.
    if (i >= AssignmentRoles.length && rnd.chance(0.1)) {
      const extra = contact()
      if (!roleAssignments.some((pair) => pair.role === "TECH_LEAD" && pair.contact === extra)) roleAssignments.push({ role: "TECH_LEAD", contact: extra })
    }

    // Three cost shapes: split costs, only the amount from before the split, or nothing known.
    const costShape = i < 3 ? i : rnd.int(10) < 7 ? 0 : rnd.chance(0.5) ? 1 : 2
    const cost = (p: number) => (costShape === 0 && rnd.chance(p) ? (1 + rnd.int(5_000)) * 10_000 : null)
    const licenseCost = cost(0.8)
    const supportCost = cost(0.6)
    const infraCost = cost(0.6)
    const staffCost = costShape === 0 && licenseCost === null && supportCost === null && infraCost === null
      ? (1 + rnd.int(5_000)) * 10_000
      : cost(0.5)
    const rto = i < 2 ? (i === 0 ? 0.5 : null) : rnd.chance(0.8) ? rnd.pick(hours) : null

    records.push({
      code,
      name: `${rnd.pick(domains)} ${rnd.pick(kinds)} ${pad(i + 1, width)}`,
      description: rnd.chance(0.8) ? `Demo application ${code}, generated from seed ${size.seed}.` : null,
      parentCode,
      status: cover(i, statuses, () => (rnd.chance(0.7) ? "ACTIVE" : rnd.pick(statuses))),
      dataClassification: cover(i, classifications, () => rnd.pick(classifications)),
      criticality: cover(i, criticalities, () => rnd.pick(criticalities)),
      rtoHours: rto,
      rpoHours: rto === null ? null : rnd.pick(hours.filter((h) => h <= rto)),
      regulations,
      roleAssignments,
      licenseCost,
      supportCost,
      infraCost,
      staffCost,
      legacyAnnualCost: costShape === 1 ? (1 + rnd.int(10_000)) * 10_000 : null,
      revision: 1,
      createdAt: now,
      updatedAt: now
    })
  }
  return records
}

const makeFunctions = (
  tenantId: string,
  size: DemoSize,
  rnd: ReturnType<typeof prng>,
  now: DateTime.Utc
): Array<FunctionFields & { readonly level: number }> => {
  const rootCount = Math.min(size.functions, Math.max(1, Math.min(12, Math.round(size.functions / 400))))
  const functions: Array<FunctionFields & { readonly level: number }> = []
  const childCounts = new Map<string, number>()
  const openParents: Array<FunctionFields & { readonly level: number }> = []
  const add = (parent: (FunctionFields & { readonly level: number }) | null) => {
    const index = functions.length
    const siblings = (childCounts.get(parent?.id ?? "") ?? 0) + 1
    childCounts.set(parent?.id ?? "", siblings)
    const code = parent === null ? `BF${pad(siblings, 2)}` : `${parent.code}.${pad(siblings, 2)}`
    const name = `${rnd.pick(verbs)} ${rnd.pick(objects)}`
    const fn = {
      id: demoId(tenantId, size.seed, index),
      code,
      name,
      description: rnd.chance(0.7) ? `${name} (${code}).` : null,
      parentId: parent?.id ?? null,
      createdAt: now,
      updatedAt: now,
      level: (parent?.level ?? 0) + 1
    }
    functions.push(fn)
    if (fn.level < size.maxDepth) openParents.push(fn)
    return fn
  }
  for (let r = 0; r < rootCount; r++) add(null)
  // One branch as deep as allowed, then the rest anywhere above the depth limit.
  let deepest = functions[0]
  while (deepest !== undefined && deepest.level < size.maxDepth && functions.length < size.functions) deepest = add(deepest)
  while (functions.length < size.functions) add(rnd.pick(openParents))
  return functions
}

/** A realistic referential for demos and load tests; the same size and seed give the same data. */
export const generateDemoReferential = (tenantId: string, size: DemoSize, now: DateTime.Utc): DemoReferential => {
  const rnd = prng(size.seed)
  const applications = makeApplications(size, rnd, now)
  const functions = makeFunctions(tenantId, size, rnd, now)
  // Every tenth application stays unlinked, so "applications without function" means something.
  const linkable = applications.filter((_, i) => i % 10 !== 9).map((application) => application.code)
  const links: Array<FunctionLink> = []
  for (const fn of functions) {
    if (linkable.length === 0 || rnd.chance(0.25)) continue
    const codes = new Set<string>()
    const wanted = 1 + rnd.int(3)
    for (let k = 0; k < wanted; k++) codes.add(rnd.pick(linkable))
    for (const applicationCode of codes) links.push({ functionId: fn.id, applicationCode })
  }
  return {
    applications,
    functions: functions.map(({ level: _level, ...fields }) => fields),
    links
  }
}
