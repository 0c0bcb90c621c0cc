import { type ApplicationEvent, ChangeLogEntry, Conflict, DemoSeedResult } from "@portfolio/domain"
import { applicationEvent } from "../domain/ApplicationEventPayload.js"
import { ReferentialOutbox } from "../ports/ReferentialOutbox.js"
import { ApplicationRepository } from "../ports/ApplicationRepository.js"
import { FunctionRepository } from "../ports/FunctionRepository.js"
import { Scopes } from "../ports/TenantRevisions.js"
import { DateTime, Effect } from "effect"
import { trackedChanges } from "../domain/ApplicationChanges.js"
import { type DemoSize, generateDemoReferential } from "./DemoReferential.js"
import { newId } from "@portfolio/platform/ids"
import { writing } from "./Writing.js"

/**
 * Fills an empty referential with generated demo data, audit entries and `application.created`
 * events of the creations included, in one transaction of bulk inserts.
 */
export const seedDemo = Effect.fn("seedDemo")(function*(tenantId: string, size: DemoSize, changedBy: string) {
  const applications = yield* ApplicationRepository
  const functions = yield* FunctionRepository
  const events = yield* ReferentialOutbox
  // Both scopes: applications, functions and their links.
  return yield* writing(
    tenantId,
    Scopes,
    () => Effect.gen(function*() {
      const applicationCount = yield* applications.count(tenantId)
      const functionCount = yield* functions.count(tenantId)
      if (applicationCount > 0 || functionCount > 0) {
        return yield* new Conflict({
          detail: `Tenant ${tenantId} already has ${applicationCount} applications and ${functionCount} business functions; ` +
            "the demo seed only fills an empty referential."
        })
      }
      const now = yield* DateTime.now
      const demo = generateDemoReferential(tenantId, size, now)
      yield* applications.insertMany(tenantId, demo.applications)
      yield* functions.insertMany(tenantId, demo.functions, demo.links)
      const entries: Array<ChangeLogEntry> = []
      const created: Array<ApplicationEvent> = []
      for (const record of demo.applications) {
        const changes = trackedChanges(undefined, record)
        for (const change of changes) {
          entries.push(new ChangeLogEntry({ id: yield* newId, applicationCode: record.code, ...change, changedBy, changedAt: now }, true))
        }
        created.push(applicationEvent({ id: yield* newId, tenantId, createdAt: now, created: true, after: record, changes }))
      }
      yield* applications.appendChanges(tenantId, entries)
      yield* events.append(created)
      return new DemoSeedResult({ applications: demo.applications.length, functions: demo.functions.length, links: demo.links.length })
    })
  )
})
