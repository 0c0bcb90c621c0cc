import { describe, expect, it } from "vitest"
import { referentialStats } from "../../src/domain/ReferentialCounts.js"

describe("the statistics from their two halves", () => {
  it("derives the applications without a function, the average and zero-filled breakdowns", () => {
    const stats = referentialStats(
      { functionCount: 3, rootFunctionCount: 1, maxDepth: 3, functionsWithoutApplication: 1, linkCount: 2, linkedApplicationCount: 1 },
      { applicationCount: 4, applicationsByCriticality: { IMPORTANT: 3, LOW: 1 }, applicationsByDataClassification: { INTERNAL: 4 }, applicationsByStatus: { ACTIVE: 4 } }
    )
    expect({ ...stats }).toEqual({
      functionCount: 3,
      rootFunctionCount: 1,
      maxDepth: 3,
      functionsWithoutApplication: 1,
      applicationCount: 4,
      applicationsWithoutFunction: 3,
      linkCount: 2,
      averageApplicationsPerFunction: 0.67,
      applicationsByCriticality: { MISSION_CRITICAL: 0, IMPORTANT: 3, NOMINAL: 0, LOW: 1 },
      applicationsByDataClassification: { PUBLIC: 0, INTERNAL: 4, CONFIDENTIAL: 0, RESTRICTED: 0 },
      applicationsByStatus: { ACTIVE: 4, PLANNED: 0, DEPRECATED: 0, RETIRED: 0 }
    })
  })

  it("answers 0 on average for a referential without functions", () => {
    const empty = referentialStats(
      { functionCount: 0, rootFunctionCount: 0, maxDepth: 0, functionsWithoutApplication: 0, linkCount: 0, linkedApplicationCount: 0 },
      { applicationCount: 2, applicationsByCriticality: {}, applicationsByDataClassification: {}, applicationsByStatus: {} }
    )
    expect({ averageApplicationsPerFunction: empty.averageApplicationsPerFunction, applicationsWithoutFunction: empty.applicationsWithoutFunction }).toEqual({
      averageApplicationsPerFunction: 0,
      applicationsWithoutFunction: 2
    })
  })
})
