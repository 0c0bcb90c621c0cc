import { Schema } from "effect"
import { Application } from "../Application.js"
import { TrackedField } from "../ChangeLog.js"
import { DateTimeUtc, Uuid } from "../Wire.js"

/** Subjects on which the referential publishes its application events (JetStream stream `EVENTS`, subjects `events.>`). */
export const ApplicationCreatedSubject = "events.referential.application.created"
export const ApplicationUpdatedSubject = "events.referential.application.updated"

/**
 * The application as the single-application read answers it, with its revision: it grows by one
 * with every change of the application, so that a receiver can drop an update older than what it
 * holds (delivery order is not guaranteed across retries).
 */
export const ApplicationEventData = Schema.Struct({
  ...Application.fields,
  revision: Schema.Int.pipe(Schema.check(Schema.isGreaterThan(0))).annotate({
    description: "Grows by one with every change of the application (1 at creation): keep the highest seen, drop the older."
  })
}).annotate({ identifier: "ApplicationEventData" })

/** One tracked field of an update, its values as the change log writes them (text, or null when unset). */
export const ApplicationFieldChange = Schema.Struct({
  field: TrackedField,
  oldValue: Schema.NullOr(Schema.String),
  newValue: Schema.NullOr(Schema.String)
}).annotate({ identifier: "ApplicationFieldChange" })

/** The fields every event of the referential carries around its `type` and `data`. */
export const eventEnvelope = {
  id: Uuid.annotate({ identifier: undefined, description: "The event's id, also its JetStream message id: receivers are idempotent on it." }),
  createdAt: DateTimeUtc,
  tenantId: Uuid
}

export class ApplicationCreated extends Schema.Class<ApplicationCreated>("ApplicationCreated")({
  ...eventEnvelope,
  type: Schema.Literal("application.created"),
  data: ApplicationEventData
}, { description: "An application was created (by PUT, `portfolio app put` or the demo seed); revision 1." }) {}

export class ApplicationUpdated extends Schema.Class<ApplicationUpdated>("ApplicationUpdated")({
  ...eventEnvelope,
  type: Schema.Literal("application.updated"),
  data: Schema.Struct({
    ...ApplicationEventData.fields,
    changes: Schema.Array(ApplicationFieldChange).annotate({
      description: "The tracked fields that changed, in the change log's order; empty when only untracked fields (name, description...) did."
    })
  }).annotate({ identifier: "ApplicationUpdatedData" })
}, { description: "An application changed; a PUT that changes nothing sends none." }) {}

export const ApplicationEvent = Schema.Union([ApplicationCreated, ApplicationUpdated])
export type ApplicationEvent = typeof ApplicationEvent.Type
