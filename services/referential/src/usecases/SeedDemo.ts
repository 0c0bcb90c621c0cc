import { type ApplicationEvent, ChangeLogEntry, Conflict, DemoSeedResult, trusted } from "@portfolio/domain"
import { applicationEvent } from "../domain/ApplicationEventPayload.js"
import { ReferentialOutbox } from "../ports/ReferentialOutbox.js"
import { ApplicationRepository } from "../ports/ApplicationRepository.js"
import { FunctionRepository } from "../ports/FunctionRepository.js"
import { Scopes } from "../ports/TenantRevisions.js"
import { DateTime, Effect } from "effect"
import { trackedChanges } from "../domain/ApplicationChanges.js"
import { type DemoSize, demoReferentialChunks } from "./DemoReferential.js"
import { newId } from "@portfolio/platform/ids"
import { writing } from "./Writing.js"

/**
 * Fills an empty referential with generated demo data, audit entries and `application.created`
 * events of the creations included, in one transaction of bulk inserts, a chunk at a time.
 */
export const seedDemo = Effect.fn("seedDemo")(function*(tenantId: string, size: DemoSize, changedBy: string) {
  const applications = yield* ApplicationRepository
  const functions = yield* FunctionRepository
  const events = yield* ReferentialOutbox
  // Both scopes: applications, functions and their links.
  const seeded = yield* writing(
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
      // Each chunk is written and dropped before the next is generated, so that the heap holds one
      // chunk whatever the size (docs/architecture.md, "Memory"); the one transaction keeps the
      // seed atomic all the same.
      const written = { applications: 0, functions: 0, links: 0 }
      for (const chunk of demoReferentialChunks(tenantId, size, now)) {
        switch (chunk._tag) {
          case "Applications": {
            yield* applications.insertMany(tenantId, chunk.applications)
            const entries: Array<ChangeLogEntry> = []
            const created: Array<ApplicationEvent> = []
            for (const record of chunk.applications) {
              const changes = trackedChanges(undefined, record)
              for (const change of changes) {
                entries.push(trusted(ChangeLogEntry, { id: yield* newId, applicationCode: record.code, ...change, changedBy, changedAt: now }))
              }
              created.push(applicationEvent({ id: yield* newId, tenantId, createdAt: now, created: true, after: record, changes }))
            }
            yield* applications.appendChanges(tenantId, entries)
            yield* events.append(created)
            written.applications += chunk.applications.length
            break
          }
          case "Functions": {
            yield* functions.insertMany(tenantId, chunk.functions)
            written.functions += chunk.functions.length
            break
          }
          case "Links": {
            yield* functions.insertLinks(tenantId, chunk.links)
            written.links += chunk.links.length
            break
          }
        }
      }
      return new DemoSeedResult(written)
    })
  )
  // Tens of thousands of rows at once: the storage's statistics and indexes catch up now rather
  // than whenever its background upkeep comes by, so the tenant's first reads plan for its size.
  yield* functions.settleBulkLoad
  return seeded
})
