import { type ApplicationFilters, ChangeLimitCap, ChangeLimitDefault, NotFound } from "@portfolio/domain"
import { ApplicationRepository } from "../ports/ApplicationRepository.js"
import { Effect, Option } from "effect"
import { toApplication } from "../domain/ApplicationView.js"

export const applicationNotFound = (code: string) => new NotFound({ detail: `No application with code '${code}'.` })

export const listApplications = Effect.fn("listApplications")(function*(tenantId: string, filters: ApplicationFilters) {
  const applications = yield* ApplicationRepository
  const records = yield* applications.list(tenantId, filters)
  return records.map(toApplication)
})

export const getApplication = Effect.fn("getApplication")(function*(tenantId: string, code: string) {
  const applications = yield* ApplicationRepository
  const record = yield* applications.find(tenantId, code)
  if (Option.isNone(record)) return yield* applicationNotFound(code)
  return toApplication(record.value)
})

/** Newest first; `limit` defaults to 50 and is capped at 200 (values below 1 never get here). */
export const listApplicationChanges = Effect.fn("listApplicationChanges")(
  function*(tenantId: string, code: string, limit: number | undefined) {
    const applications = yield* ApplicationRepository
    if (Option.isNone(yield* applications.find(tenantId, code))) return yield* applicationNotFound(code)
    return yield* applications.listChanges(tenantId, code, Math.min(limit ?? ChangeLimitDefault, ChangeLimitCap))
  }
)
