import { Application, trusted } from "@portfolio/domain"
import type { ApplicationRecord } from "./ApplicationRecord.js"
import { renderRegulations } from "./Regulations.js"
import { firstContact, renderRoleAssignments } from "./RoleAssignments.js"

/** The split costs summed when any is set; otherwise the single amount of before the split. */
export const annualCostOf = (record: ApplicationRecord): number | null => {
  const costs = [record.licenseCost, record.supportCost, record.infraCost, record.staffCost]
  const set = costs.filter((cost): cost is number => cost !== null)
  return set.length === 0 ? record.legacyAnnualCost : set.reduce((sum, cost) => sum + cost, 0)
}

/**
 * The application as every read answers it, with the deprecated fields derived. A record is valid
 * by construction (its input was checked, its storage constrains it): checking it again cost 1.2 s
 * of a 10,000-application list.
 */
export const toApplication = (record: ApplicationRecord): Application =>
  trusted(Application, {
    code: record.code,
    name: record.name,
    description: record.description,
    parentCode: record.parentCode,
    status: record.status,
    dataClassification: record.dataClassification,
    criticality: record.criticality,
    rtoHours: record.rtoHours,
    rpoHours: record.rpoHours,
    regulations: renderRegulations(record.regulations),
    roleAssignments: renderRoleAssignments(record.roleAssignments),
    licenseCost: record.licenseCost,
    supportCost: record.supportCost,
    infraCost: record.infraCost,
    staffCost: record.staffCost,
    annualCost: annualCostOf(record),
    applicationVip: record.criticality === "MISSION_CRITICAL",
    contactIT: firstContact(record.roleAssignments, "TECH_LEAD"),
    contactMetier: firstContact(record.roleAssignments, "PRODUCT_OWNER"),
    createdAt: record.createdAt,
    updatedAt: record.updatedAt
  })
