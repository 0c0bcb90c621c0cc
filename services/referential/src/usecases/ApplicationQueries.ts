import {
  ApplicationCode,
  type ApplicationFilters,
  ChangeLimitCap,
  ChangeLimitDefault,
  ChangeLogEntry,
  ChangePageSize,
  NotFound,
  PublicPageSize
} from "@portfolio/domain"
import { cursorCodec, CursorTime, keysetPage, mapPage } from "@portfolio/platform/http"
import { ApplicationRepository, type ChangePosition } from "../ports/ApplicationRepository.js"
import { Effect, Option, Schema } from "effect"
import { toApplication } from "../domain/ApplicationView.js"

/**
 * The `limit` and `cursor` of a page as the handlers pass them on, either possibly absent or
 * undefined (a destructured query keeps a key it did not have).
 */
export interface PageRequest {
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

export const applicationNotFound = (code: string) => new NotFound({ detail: `No application with code '${code}'.` })

/** Sorted by code, so a page resumes after the last code; the filters are part of the list. */
const ApplicationCursor = cursorCodec("applications", ApplicationCode)

/** A page of `listApplications` (docs/product-rules.md#lists). */
export const listApplicationsPage = Effect.fn("listApplicationsPage")(
  function*(tenantId: string, filters: ApplicationFilters, query: PageRequest) {
    const applications = yield* ApplicationRepository
    const page = yield* keysetPage({
      codec: ApplicationCursor,
      scope: { tenantId, filters },
      query,
      size: PublicPageSize,
      read: (after, limit) => applications.list(tenantId, filters, { after, limit }),
      keyOf: (last) => last.code
    })
    return mapPage(page, toApplication)
  }
)

export const getApplication = Effect.fn("getApplication")(function*(tenantId: string, code: string) {
  const applications = yield* ApplicationRepository
  const record = yield* applications.find(tenantId, code)
  if (Option.isNone(record)) return yield* applicationNotFound(code)
  return toApplication(record.value)
})

/** The entries of `code`'s log as the repository pages them, or a 404 for an unknown application. */
const changesOf = (tenantId: string, code: string, limit: number, after?: ChangePosition) =>
  Effect.gen(function*() {
    const entries = yield* (yield* ApplicationRepository).listChanges(tenantId, code, limit, after)
    if (Option.isNone(entries)) return yield* applicationNotFound(code)
    return entries.value
  })

/** Newest first; `limit` defaults to 50 and is capped at 200 (values below 1 never get here). */
export const listApplicationChanges = Effect.fn("listApplicationChanges")(
  function*(tenantId: string, code: string, limit: number | undefined) {
    return yield* changesOf(tenantId, code, Math.min(limit ?? ChangeLimitDefault, ChangeLimitCap))
  }
)

/** The last entry's time (epoch milliseconds, as entries are written) and id. */
const ChangeCursor = cursorCodec("application-changes", Schema.Tuple([CursorTime, ChangeLogEntry.fields.id]))

/**
 * A page of `listApplicationChanges`, in its own page sizes. A cursor of another application's
 * log is refused like any other, before the application is looked up.
 */
export const listApplicationChangesPage = Effect.fn("listApplicationChangesPage")(
  function*(tenantId: string, code: string, query: PageRequest) {
    return yield* keysetPage({
      codec: ChangeCursor,
      scope: { tenantId, code },
      query,
      size: ChangePageSize,
      read: (after, limit) =>
        changesOf(tenantId, code, limit, Option.getOrUndefined(Option.map(after, ([changedAtMillis, id]) => ({ changedAtMillis, id })))),
      keyOf: (last) => [last.changedAt.epochMilliseconds, last.id] as const
    })
  }
)
