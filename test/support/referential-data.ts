/**
 * A small, known referential: the applications put through `portfolio app put`, and the
 * application bodies the public API must answer for them once every update has been applied.
 */

export interface ApplicationBody {
  readonly code: string
  readonly name: string
  readonly description: string | null
  readonly parentCode: string | null
  readonly status: "ACTIVE" | "PLANNED" | "DEPRECATED" | "RETIRED"
  readonly dataClassification: "PUBLIC" | "INTERNAL" | "CONFIDENTIAL" | "RESTRICTED"
  readonly criticality: "MISSION_CRITICAL" | "IMPORTANT" | "NOMINAL" | "LOW"
  readonly rtoHours: number | null
  readonly rpoHours: number | null
  readonly regulations: string
  readonly roleAssignments: string
  readonly licenseCost: number | null
  readonly supportCost: number | null
  readonly infraCost: number | null
  readonly staffCost: number | null
  readonly annualCost: number | null
  readonly applicationVip: boolean
  readonly contactIT: string | null
  readonly contactMetier: string | null
}

const blank = {
  description: null,
  parentCode: null,
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
  contactMetier: null
} as const

/** Puts in this order (a parent before its child). */
export const tenantAInputs: ReadonlyArray<Record<string, unknown>> = [
  {
    code: "APP-CORE",
    name: "Core Banking",
    description: "Ledger and accounts",
    status: "ACTIVE",
    dataClassification: "RESTRICTED",
    criticality: "MISSION_CRITICAL",
    rtoHours: 1,
    rpoHours: 0.5,
    regulations: "DORA,NIS2",
    roleAssignments: "PRODUCT_OWNER:paula@bank.example,TECH_LEAD:tom@bank.example",
    licenseCost: 1_000_000,
    supportCost: 250_000,
    infraCost: 500_000,
    staffCost: 2_000_000
  },
  {
    code: "APP-CRM",
    name: "Customer Relationship",
    status: "ACTIVE",
    dataClassification: "CONFIDENTIAL",
    criticality: "IMPORTANT",
    rtoHours: 4,
    rpoHours: 1,
    regulations: "NIS2,RGPD",
    roleAssignments: "BUSINESS_OWNER:bella@bank.example",
    licenseCost: 300_000
  },
  {
    code: "APP-INTRA",
    name: "Intranet",
    status: "PLANNED",
    dataClassification: "INTERNAL",
    criticality: "LOW"
  },
  {
    code: "APP-PAY",
    name: "Payments Hub",
    parentCode: "APP-CORE",
    status: "DEPRECATED",
    dataClassification: "RESTRICTED",
    criticality: "MISSION_CRITICAL",
    rtoHours: 0.25,
    rpoHours: 0,
    regulations: "PCI_DSS",
    roleAssignments: "TECH_LEAD:tara@bank.example,TECH_LEAD:theo@bank.example,SECURITY_OFFICER:sam@bank.example",
    infraCost: 50_000,
    staffCost: 70_000
  },
  {
    code: "APP-WEB",
    name: "Public Website",
    status: "RETIRED",
    dataClassification: "PUBLIC",
    criticality: "NOMINAL",
    regulations: "HDS,ISO_27001",
    supportCost: 0
  },
  // Only deprecated fields: the legacy mapping (docs/product-rules.md#referential) must give criticality, licenseCost and roles.
  {
    code: "APP-LEGACY",
    name: "Legacy Mainframe",
    status: "ACTIVE",
    applicationVip: true,
    annualCost: 90_000,
    contactIT: "ivan@bank.example",
    contactMetier: "mona@bank.example"
  },
  // Nothing but what is required: the documented defaults (docs/product-rules.md#referential).
  { code: "APP-MIN", name: "Minimal", status: "ACTIVE" },
  { code: "SHARED-1", name: "Alpha shared", status: "ACTIVE", dataClassification: "PUBLIC", criticality: "LOW" }
]

/** The audited application: created, then updated one tracked field at a time through the CLI. */
export const auditCreate = {
  code: "APP-AUDIT",
  name: "Audit Trail",
  status: "ACTIVE",
  dataClassification: "INTERNAL",
  criticality: "NOMINAL",
  regulations: "DORA",
  rtoHours: 24
}
export const auditUpdates: ReadonlyArray<{ readonly input: Record<string, unknown>; readonly change: { field: string; oldValue: string | null; newValue: string | null } | null }> = [
  { input: { code: "APP-AUDIT", name: "Audit Trail", criticality: "IMPORTANT" }, change: { field: "criticality", oldValue: "NOMINAL", newValue: "IMPORTANT" } },
  { input: { code: "APP-AUDIT", name: "Audit Trail", regulations: "DORA,NIS2" }, change: { field: "regulations", oldValue: "DORA", newValue: "DORA,NIS2" } },
  // The name is not audited: only the rtoHours entry may appear.
  { input: { code: "APP-AUDIT", name: "Audit Trail v2", rtoHours: 8 }, change: { field: "rtoHours", oldValue: "24", newValue: "8" } },
  { input: { code: "APP-AUDIT", name: "Audit Trail v2", dataClassification: "CONFIDENTIAL" }, change: { field: "dataClassification", oldValue: "INTERNAL", newValue: "CONFIDENTIAL" } },
  { input: { code: "APP-AUDIT", name: "Audit Trail v2", licenseCost: 150_000 }, change: { field: "licenseCost", oldValue: null, newValue: "150000" } },
  // Putting the same values again changes nothing, so it records nothing.
  { input: { code: "APP-AUDIT", name: "Audit Trail v2", licenseCost: 150_000, criticality: "IMPORTANT" }, change: null }
]

/** Created through the referential admin API, then its rtoHours set to 1..bulkUpdates. */
export const bulkCode = "APP-BULK"
export const bulkUpdates = 205
export const bulkCreate = { name: "Bulk", status: "ACTIVE", dataClassification: "INTERNAL", criticality: "NOMINAL", rtoHours: 0 }

/** What every read must answer for tenant A once the fixtures are in, sorted by code. */
export const tenantAExpected: ReadonlyArray<ApplicationBody> = [
  {
    ...blank,
    code: "APP-AUDIT",
    name: "Audit Trail v2",
    status: "ACTIVE",
    dataClassification: "CONFIDENTIAL",
    criticality: "IMPORTANT",
    rtoHours: 8,
    regulations: "DORA,NIS2",
    licenseCost: 150_000,
    annualCost: 150_000
  },
  { ...blank, code: "APP-BULK", name: "Bulk", status: "ACTIVE", dataClassification: "INTERNAL", criticality: "NOMINAL", rtoHours: bulkUpdates },
  {
    ...blank,
    code: "APP-CORE",
    name: "Core Banking",
    description: "Ledger and accounts",
    status: "ACTIVE",
    dataClassification: "RESTRICTED",
    criticality: "MISSION_CRITICAL",
    rtoHours: 1,
    rpoHours: 0.5,
    regulations: "DORA,NIS2",
    roleAssignments: "PRODUCT_OWNER:paula@bank.example,TECH_LEAD:tom@bank.example",
    licenseCost: 1_000_000,
    supportCost: 250_000,
    infraCost: 500_000,
    staffCost: 2_000_000,
    annualCost: 3_750_000,
    applicationVip: true,
    contactIT: "tom@bank.example",
    contactMetier: "paula@bank.example"
  },
  {
    ...blank,
    code: "APP-CRM",
    name: "Customer Relationship",
    status: "ACTIVE",
    dataClassification: "CONFIDENTIAL",
    criticality: "IMPORTANT",
    rtoHours: 4,
    rpoHours: 1,
    regulations: "NIS2,RGPD",
    roleAssignments: "BUSINESS_OWNER:bella@bank.example",
    licenseCost: 300_000,
    annualCost: 300_000
  },
  { ...blank, code: "APP-INTRA", name: "Intranet", status: "PLANNED", dataClassification: "INTERNAL", criticality: "LOW" },
  {
    ...blank,
    code: "APP-LEGACY",
    name: "Legacy Mainframe",
    status: "ACTIVE",
    dataClassification: "INTERNAL",
    criticality: "MISSION_CRITICAL",
    roleAssignments: "PRODUCT_OWNER:mona@bank.example,TECH_LEAD:ivan@bank.example",
    licenseCost: 90_000,
    annualCost: 90_000,
    applicationVip: true,
    contactIT: "ivan@bank.example",
    contactMetier: "mona@bank.example"
  },
  { ...blank, code: "APP-MIN", name: "Minimal", status: "ACTIVE", dataClassification: "INTERNAL", criticality: "NOMINAL" },
  {
    ...blank,
    code: "APP-PAY",
    name: "Payments Hub",
    parentCode: "APP-CORE",
    status: "DEPRECATED",
    dataClassification: "RESTRICTED",
    criticality: "MISSION_CRITICAL",
    rtoHours: 0.25,
    rpoHours: 0,
    regulations: "PCI_DSS",
    roleAssignments: "TECH_LEAD:tara@bank.example,TECH_LEAD:theo@bank.example,SECURITY_OFFICER:sam@bank.example",
    infraCost: 50_000,
    staffCost: 70_000,
    annualCost: 120_000,
    applicationVip: true,
    contactIT: "tara@bank.example"
  },
  {
    ...blank,
    code: "APP-WEB",
    name: "Public Website",
    status: "RETIRED",
    dataClassification: "PUBLIC",
    criticality: "NOMINAL",
    regulations: "HDS,ISO_27001",
    supportCost: 0,
    annualCost: 0
  },
  { ...blank, code: "SHARED-1", name: "Alpha shared", status: "ACTIVE", dataClassification: "PUBLIC", criticality: "LOW" }
]

/** Tenant B: one code in common with tenant A, and one of its own. */
export const tenantBInputs: ReadonlyArray<Record<string, unknown>> = [
  { code: "APP-BETA", name: "Beta only", status: "ACTIVE", dataClassification: "RESTRICTED", criticality: "IMPORTANT", regulations: "DORA" },
  { code: "SHARED-1", name: "Beta shared", status: "PLANNED", dataClassification: "CONFIDENTIAL", criticality: "MISSION_CRITICAL" }
]
export const tenantBExpected: ReadonlyArray<ApplicationBody> = [
  { ...blank, code: "APP-BETA", name: "Beta only", status: "ACTIVE", dataClassification: "RESTRICTED", criticality: "IMPORTANT", regulations: "DORA" },
  { ...blank, code: "SHARED-1", name: "Beta shared", status: "PLANNED", dataClassification: "CONFIDENTIAL", criticality: "MISSION_CRITICAL", applicationVip: true }
]

const tokens = (list: string) => (list === "" ? [] : list.split(",").sort())

/**
 * `regulations` and `roleAssignments` are sets written as comma-separated strings; the contract
 * does not fix their order, so both sides are compared as sorted lists.
 */
export const comparable = (body: any) => ({ ...body, regulations: tokens(body.regulations), roleAssignments: tokens(body.roleAssignments) })

export const isoTimestamp = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/

/** What a list or read must equal: the expected body with timestamps of the right form. */
export const expectedRead = (app: ApplicationBody, matchers: { stringMatching: (r: RegExp) => unknown }) =>
  comparable({ ...app, createdAt: matchers.stringMatching(isoTimestamp), updatedAt: matchers.stringMatching(isoTimestamp) })

export interface ApplicationFilter {
  readonly data_class?: string
  readonly criticality?: string
  readonly regulation?: string
  readonly status?: string
}

/** The filters' semantics (AND of equalities, regulation as token membership), over expected bodies. */
export const applyFilter = (apps: ReadonlyArray<ApplicationBody>, filter: ApplicationFilter) =>
  apps.filter((app) =>
    (filter.data_class === undefined || app.dataClassification === filter.data_class) &&
    (filter.criticality === undefined || app.criticality === filter.criticality) &&
    (filter.status === undefined || app.status === filter.status) &&
    (filter.regulation === undefined || tokens(app.regulations).includes(filter.regulation)))
