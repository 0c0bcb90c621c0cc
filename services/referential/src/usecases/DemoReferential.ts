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

/**
 * The demo in the order it is generated: every application, then every function, then every link,
 * each in order (parents before their children). The seed writes a chunk and lets it go before the
 * next is made: at 10,000 applications and 25,000 functions, the whole demo held at once with its
 * audit entries and events (records 27 MB, 79,000 entries 43 MB, events 34 MB, their encoded
 * payloads 25 MB) overran the compiled service's 128 MB heap (docs/architecture.md, "Memory").
 */
export type DemoChunk =
  | { readonly _tag: "Applications"; readonly applications: ReadonlyArray<ApplicationRecord> }
  | { readonly _tag: "Functions"; readonly functions: ReadonlyArray<FunctionFields> }
  | { readonly _tag: "Links"; readonly links: ReadonlyArray<FunctionLink> }

/**
 * Most records per chunk. An application costs some 14 KB of heap while its chunk is written (its
 * record and rows, ~8 audit entries and their rows, its event and encoded payload); a function or
 * a link well under 1 KB. Fewer statements than smaller chunks, a few MB more than one statement's worth.
 */
export const DemoChunkSizes = { applications: 1_000, functions: 5_000, links: 10_000 } as const

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

type Random = ReturnType<typeof prng>

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

/** The i-th application's code (from 0): codes are made from the index, so a chunk needs no earlier record. */
const applicationCode = (index: number, width: number) => `APP-${pad(index + 1, width)}`

const applicationCodeWidth = (size: DemoSize) => Math.max(4, String(size.applications).length)

function* makeApplications(size: DemoSize, rnd: Random, now: DateTime.Utc): Generator<ApplicationRecord, void> {
  const width = applicationCodeWidth(size)
  const contact = () => `${rnd.pick(people)}.${rnd.pick(surnames)}@example.com`
  // Indexes rather than codes or records: all a later child needs of a root.
  const rootIndexes: Array<number> = []
  for (let i = 0; i < size.applications; i++) {
    const code = applicationCode(i, width)
    const parentCode = i === 1
      ? applicationCode(rootIndexes[0]!, width)
      : i > 1 && rootIndexes.length > 0 && rnd.chance(0.1)
      ? applicationCode(rnd.pick(rootIndexes), width)
      : null
    if (parentCode === null) rootIndexes.push(i)

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

    yield {
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
    }
  }
}

/**
 * What a later function needs of an earlier one is kept by index (its code, level and number of
 * children so far); its id is derived again from the index, its record is not kept.
 */
function* makeFunctions(tenantId: string, size: DemoSize, rnd: Random, now: DateTime.Utc): Generator<FunctionFields, void> {
  const rootCount = Math.min(size.functions, Math.max(1, Math.min(12, Math.round(size.functions / 400))))
  const codes: Array<string> = []
  const levels = new Uint8Array(size.functions)
  const childCounts = new Uint32Array(size.functions)
  let rootChildren = 0
  const openParents: Array<number> = []
  const add = (parent: number | null): FunctionFields => {
    const index = codes.length
    const siblings = parent === null ? ++rootChildren : ++childCounts[parent]!
    const code = parent === null ? `BF${pad(siblings, 2)}` : `${codes[parent]!}.${pad(siblings, 2)}`
    const name = `${rnd.pick(verbs)} ${rnd.pick(objects)}`
    const level = (parent === null ? 0 : levels[parent]!) + 1
    codes.push(code)
    levels[index] = level
    if (level < size.maxDepth) openParents.push(index)
    return {
      id: demoId(tenantId, size.seed, index),
      code,
      name,
      description: rnd.chance(0.7) ? `${name} (${code}).` : null,
      parentId: parent === null ? null : demoId(tenantId, size.seed, parent),
      createdAt: now,
      updatedAt: now
    }
  }
  for (let r = 0; r < rootCount; r++) yield add(null)
  // One branch as deep as allowed, then the rest anywhere above the depth limit.
  let deepest = rootCount > 0 ? 0 : undefined
  while (deepest !== undefined && levels[deepest]! < size.maxDepth && codes.length < size.functions) {
    yield add(deepest)
    deepest = codes.length - 1
  }
  while (codes.length < size.functions) {
    if (openParents.length === 0) throw new Error(`No business function above depth ${size.maxDepth} to place the others under.`)
    yield add(rnd.pick(openParents))
  }
}

/** Links take their draws after every function's, as they did before the demo came in chunks. */
function* makeLinks(tenantId: string, size: DemoSize, rnd: Random): Generator<FunctionLink, void> {
  const width = applicationCodeWidth(size)
  // Every tenth application stays unlinked, so "applications without function" means something.
  const linkable = size.applications - Math.floor(size.applications / 10)
  // The k-th of those (from 0), by its index: nine in every ten.
  const linkableCode = (k: number) => applicationCode(Math.floor(k / 9) * 10 + (k % 9), width)
  for (let index = 0; index < size.functions; index++) {
    if (linkable === 0 || rnd.chance(0.25)) continue
    const codes = new Set<string>()
    const wanted = 1 + rnd.int(3)
    for (let k = 0; k < wanted; k++) codes.add(linkableCode(rnd.int(linkable)))
    const functionId = demoId(tenantId, size.seed, index)
    for (const applicationCode of codes) yield { functionId, applicationCode }
  }
}

function* chunked<A>(items: Iterable<A>, size: number): Generator<Array<A>, void> {
  let chunk: Array<A> = []
  for (const item of items) {
    chunk.push(item)
    if (chunk.length === size) {
      yield chunk
      chunk = []
    }
  }
  if (chunk.length > 0) yield chunk
}

/**
 * A realistic referential for demos and load tests, made as it is consumed: the same size and seed
 * give the same data, whatever the chunk sizes.
 */
export function* demoReferentialChunks(
  tenantId: string,
  size: DemoSize,
  now: DateTime.Utc,
  chunkSizes: { readonly applications: number; readonly functions: number; readonly links: number } = DemoChunkSizes
): Generator<DemoChunk, void> {
  // One stream of draws, in this order: applications, functions, links.
  const rnd = prng(size.seed)
  for (const applications of chunked(makeApplications(size, rnd, now), chunkSizes.applications)) {
    yield { _tag: "Applications", applications }
  }
  for (const functions of chunked(makeFunctions(tenantId, size, rnd, now), chunkSizes.functions)) yield { _tag: "Functions", functions }
  for (const links of chunked(makeLinks(tenantId, size, rnd), chunkSizes.links)) yield { _tag: "Links", links }
}

/** The whole demo at once, for tests and small sizes; the seed writes it chunk by chunk instead. */
export const generateDemoReferential = (tenantId: string, size: DemoSize, now: DateTime.Utc): DemoReferential => {
  const applications: Array<ApplicationRecord> = []
  const functions: Array<FunctionFields> = []
  const links: Array<FunctionLink> = []
  for (const chunk of demoReferentialChunks(tenantId, size, now)) {
    if (chunk._tag === "Applications") applications.push(...chunk.applications)
    else if (chunk._tag === "Functions") functions.push(...chunk.functions)
    else links.push(...chunk.links)
  }
  return { applications, functions, links }
}
