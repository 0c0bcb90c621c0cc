import { ApplicationCreated, ApplicationUpdated, type ApplicationEvent } from "@portfolio/domain"
import type { DateTime } from "effect"
import type { FieldChange } from "./ApplicationChanges.js"
import type { ApplicationRecord } from "./ApplicationRecord.js"
import { toApplication } from "./ApplicationView.js"

/**
 * The event announcing that `after` was written: a creation when there was no application before,
 * otherwise an update with its tracked changes (the change log's). `data` is the single-application
 * read's body, so that a receiver needs no call back to know the application.
 */
export const applicationEvent = (options: {
  readonly id: string
  readonly tenantId: string
  readonly createdAt: DateTime.Utc
  readonly created: boolean
  readonly after: ApplicationRecord
  readonly changes: ReadonlyArray<FieldChange>
}): ApplicationEvent => {
  const data = { ...toApplication(options.after), revision: options.after.revision }
  const envelope = { id: options.id, createdAt: options.createdAt, tenantId: options.tenantId }
  return options.created
    ? new ApplicationCreated({ ...envelope, type: "application.created", data })
    : new ApplicationUpdated({ ...envelope, type: "application.updated", data: { ...data, changes: options.changes } })
}
