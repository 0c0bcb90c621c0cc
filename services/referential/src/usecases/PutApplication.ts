import { type ApplicationInput, ChangeLogEntry, Conflict, NotFound } from "@portfolio/domain"
import { ApplicationRecord } from "../domain/ApplicationRecord.js"
import { applicationEvent } from "../domain/ApplicationEventPayload.js"
import { ReferentialOutbox } from "../ports/ReferentialOutbox.js"
import { ApplicationRepository } from "../ports/ApplicationRepository.js"
import { DateTime, Effect, Option } from "effect"
import { trackedChanges } from "../domain/ApplicationChanges.js"
import { applyApplicationInput } from "../domain/ApplicationInputMapping.js"
import { toApplication } from "../domain/ApplicationView.js"
import { newId } from "@portfolio/platform/ids"
import { writing } from "./Writing.js"

const comparedFields = Object.keys(ApplicationRecord.fields).filter((key) =>
  key !== "createdAt" && key !== "updatedAt" && key !== "revision"
) as ReadonlyArray<
  keyof ApplicationRecord
>
const sameContent = (a: ApplicationRecord, b: ApplicationRecord) =>
  comparedFields.every((key) => JSON.stringify(a[key]) === JSON.stringify(b[key]))

/** A parent must exist in the tenant, and the application must not end up among its own ancestors. */
const checkParent = Effect.fn("checkParentApplication")(function*(tenantId: string, code: string, parentCode: string) {
  const applications = yield* ApplicationRepository
  if (parentCode === code) return yield* new Conflict({ detail: `Application '${code}' cannot be its own parent.` })
  if (!(yield* applications.exists(tenantId, parentCode))) {
    return yield* new NotFound({ detail: `Parent application '${parentCode}' does not exist.` })
  }
  const ancestors = yield* applications.ancestorCodes(tenantId, parentCode)
  if (ancestors.includes(code)) {
    return yield* new Conflict({ detail: `Making '${parentCode}' the parent of '${code}' would create a cycle: '${code}' is above it.` })
  }
})

/**
 * Creates or updates an application. The row, the audit entries of its tracked fields and its
 * event are written in one transaction; a PUT that changes nothing writes nothing, and moves no
 * revision. The `applications` scope only: of the function forms, only posi and the statistics
 * show an application's fields, and they depend on both; a creation links nothing.
 */
export const putApplication = Effect.fn("putApplication")(
  function*(tenantId: string, code: string, input: ApplicationInput, changedBy: string) {
    const applications = yield* ApplicationRepository
    const events = yield* ReferentialOutbox
    const record = yield* writing(
      tenantId,
      ["applications"],
      (unchanged) => Effect.gen(function*() {
        const current = Option.getOrUndefined(yield* applications.find(tenantId, code))
        const now = yield* DateTime.now
        const mapped = yield* applyApplicationInput({ code, current, input, now })
        for (const field of mapped.deprecatedFields) {
          yield* Effect.logWarning(`deprecated field '${field}' set on application '${code}'`).pipe(
            Effect.annotateLogs({ field, applicationCode: code })
          )
        }
        const next = mapped.record
        if (next.parentCode !== null && next.parentCode !== current?.parentCode) yield* checkParent(tenantId, code, next.parentCode)
        if (current !== undefined && sameContent(current, next)) {
          yield* unchanged
          return current
        }
        yield* current === undefined ? applications.insert(tenantId, next) : applications.update(tenantId, next, current)
        const changes = trackedChanges(current, next)
        const entries: Array<ChangeLogEntry> = []
        for (const change of changes) {
          entries.push(new ChangeLogEntry({ id: yield* newId, applicationCode: code, ...change, changedBy, changedAt: now }))
        }
        yield* applications.appendChanges(tenantId, entries)
        yield* events.append([
          applicationEvent({ id: yield* newId, tenantId, createdAt: now, created: current === undefined, after: next, changes })
        ])
        return next
      })
    )
    return toApplication(record)
  }
)
