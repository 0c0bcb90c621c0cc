import { Schema } from "effect"
import { ApplicationCreated, ApplicationCreatedSubject, ApplicationUpdated, ApplicationUpdatedSubject } from "./ApplicationEvents.js"
import { DasSubmitted, DasSubmittedSubject } from "./DasEvents.js"

/** Every event the referential writes to its outbox. */
export const ReferentialEvent = Schema.Union([ApplicationCreated, ApplicationUpdated, DasSubmitted])
export type ReferentialEvent = typeof ReferentialEvent.Type

const subjects: Record<ReferentialEvent["type"], string> = {
  "application.created": ApplicationCreatedSubject,
  "application.updated": ApplicationUpdatedSubject,
  "das.submitted": DasSubmittedSubject
}

export const referentialEventSubject = (event: ReferentialEvent) => subjects[event.type]
