import type { Application, ApplicationFilters } from "@portfolio/domain"
import { Effect, Stream } from "effect"
import type { ApplicationRecord } from "../../src/domain/ApplicationRecord.js"
import { toApplication } from "../../src/domain/ApplicationView.js"
import { ApplicationRepository } from "../../src/ports/ApplicationRepository.js"

/**
 * The whole list as values (every application matching the filters, by code), every record read
 * from one snapshot: what the tests compare answers and storage with. The service answers the list
 * as JSON made from each application's (src/adapters/http/ApplicationList.ts).
 */
export const listApplications = (tenantId: string, filters: ApplicationFilters) =>
  Effect.gen(function*() {
    const applications = yield* ApplicationRepository
    let order: ReadonlyArray<{ readonly code: string }> = []
    const records = new Map<string, ApplicationRecord>()
    yield* Stream.runForEach(applications.listAllChanged(tenantId, filters, () => false, 1_000), (listed) =>
      Effect.sync(() => {
        if (listed._tag === "Order") order = listed.order
        else for (const record of listed.records) records.set(record.code, record)
      }))
    return order.map(({ code }): Application => toApplication(records.get(code)!))
  })
