import { ApplicationStatus, Criticality, DataClassification, ReferentialStats } from "@portfolio/domain"
import { Schema } from "effect"

const Count = Schema.Int.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(0)))
const Tally = Schema.Record(Schema.String, Count)

/**
 * What the statistics count of the business functions and their links: the `functions` scope
 * alone moves it. `linkedApplicationCount` is the applications at least one function links.
 */
export const FunctionCounts = Schema.Struct({
  functionCount: Count,
  rootFunctionCount: Count,
  maxDepth: Count,
  functionsWithoutApplication: Count,
  linkCount: Count,
  linkedApplicationCount: Count
})
export type FunctionCounts = typeof FunctionCounts.Type

/** What they count of the applications: the `applications` scope alone moves it. */
export const ApplicationCounts = Schema.Struct({
  applicationCount: Count,
  applicationsByCriticality: Tally,
  applicationsByDataClassification: Tally,
  applicationsByStatus: Tally
})
export type ApplicationCounts = typeof ApplicationCounts.Type

/** Every enum value appears in the breakdowns, with 0 when no application has it. */
const breakdown = (values: ReadonlyArray<string>, counts: Readonly<Record<string, number>>) =>
  Object.fromEntries(values.map((value) => [value, counts[value] ?? 0]))

/**
 * The statistics of a referential from its two halves, each read (and kept) apart so that a write
 * of one scope leaves the other's counting alone: applications are never deleted and a link names
 * an existing one, so those without a function are all of them but the linked ones.
 */
export const referentialStats = (functions: FunctionCounts, applications: ApplicationCounts): ReferentialStats =>
  new ReferentialStats({
    functionCount: functions.functionCount,
    rootFunctionCount: functions.rootFunctionCount,
    maxDepth: functions.maxDepth,
    functionsWithoutApplication: functions.functionsWithoutApplication,
    applicationCount: applications.applicationCount,
    applicationsWithoutFunction: applications.applicationCount - functions.linkedApplicationCount,
    linkCount: functions.linkCount,
    averageApplicationsPerFunction: functions.functionCount === 0 ? 0 : Math.round((functions.linkCount / functions.functionCount) * 100) / 100,
    applicationsByCriticality: breakdown(Criticality.literals, applications.applicationsByCriticality),
    applicationsByDataClassification: breakdown(DataClassification.literals, applications.applicationsByDataClassification),
    applicationsByStatus: breakdown(ApplicationStatus.literals, applications.applicationsByStatus)
  })
