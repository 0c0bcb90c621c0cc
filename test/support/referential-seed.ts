import {
  auditCreate,
  auditUpdates,
  bulkCode,
  bulkCreate,
  bulkUpdates,
  tenantAInputs,
  tenantBInputs
} from "./referential-data.js"
import type { CreatedPat, CreatedTenant, Harness } from "./system.js"

export interface SeededReferential {
  readonly tenantA: CreatedTenant
  readonly tenantB: CreatedTenant
  readonly readA: CreatedPat
  readonly writeA: CreatedPat
  readonly readB: CreatedPat
  /** Tenant A's business functions by code, as the admin API answered their creation. */
  readonly functions: Record<string, any>
}

/**
 * The referential of referential-data.ts, put in as an operator would: tenants `<prefix>-alpha` and
 * `<prefix>-beta` (a prefix per file: files share a system), PATs and applications, business
 * functions with the referential admin API.
 */
export const seedReferential = async (system: Harness, prefix: string): Promise<SeededReferential> => {
  const [tenantA, tenantB] = await Promise.all([system.createTenant(`${prefix}-alpha`), system.createTenant(`${prefix}-beta`)])
  const [readA, writeA, readB] = await Promise.all([
    system.createPat(tenantA, "read"),
    system.createPat(tenantA, "write"),
    system.createPat(tenantB, "read")
  ])

  const audit = async () => {
    // One after the other, so that their order in the change log is known.
    await system.putApplication(tenantA, auditCreate)
    for (const update of auditUpdates) await system.putApplication(tenantA, update.input)
  }
  const bulk = async () => {
    const bulkPath = `/admin/tenants/${tenantA.id}/applications/${bulkCode}`
    await system.adminOk("referential", "PUT", bulkPath, bulkCreate)
    for (let hours = 1; hours <= bulkUpdates; hours++) await system.adminOk("referential", "PUT", bulkPath, { ...bulkCreate, rtoHours: hours })
  }
  // A parent before its child; everything independent in parallel to keep the set-up short.
  await Promise.all([
    system.putApplication(tenantA, tenantAInputs[0]!).then(() => Promise.all(tenantAInputs.slice(1).map((input) => system.putApplication(tenantA, input)))),
    ...tenantBInputs.map((input) => system.putApplication(tenantB, input)),
    audit(),
    bulk()
  ])

  // Functions: no CLI command exists for them, so the operator uses the referential admin API.
  const fn: Record<string, any> = {}
  const functions = `/admin/tenants/${tenantA.id}/functions`
  fn["FIN"] = await system.adminOk("referential", "POST", functions, { code: "FIN", name: "Finance", description: "Money matters" })
  fn["HR"] = await system.adminOk("referential", "POST", functions, { code: "HR", name: "Human Resources" })
  fn["FIN-ACC"] = await system.adminOk("referential", "POST", functions, { code: "FIN-ACC", name: "Accounting", parentId: fn["FIN"].id })
  fn["FIN-PAY"] = await system.adminOk("referential", "POST", functions, { code: "FIN-PAY", name: "Payments processing", parentId: fn["FIN"].id })
  // Created under the wrong parent, then moved: the tree must show the move.
  fn["FIN-PAY-SEPA"] = await system.adminOk("referential", "POST", functions, { code: "FIN-PAY-SEPA", name: "SEPA transfers", parentId: fn["FIN-ACC"].id })
  await system.adminOk("referential", "POST", `${functions}/${fn["FIN-PAY-SEPA"].id}/move`, { parentId: fn["FIN-PAY"].id })
  for (const [code, app] of [["FIN-ACC", "APP-CORE"], ["FIN-ACC", "APP-CRM"], ["FIN-PAY-SEPA", "APP-PAY"], ["HR", "APP-CRM"]] as const) {
    await system.adminOk("referential", "PUT", `${functions}/${fn[code].id}/applications/${app}`)
  }
  await system.adminOk("referential", "POST", `/admin/tenants/${tenantB.id}/functions`, { code: "B-OPS", name: "Beta operations" })
  return { tenantA, tenantB, readA, writeA, readB, functions: fn }
}
