import { Schema } from "effect"
import { Das } from "../Das.js"
import { eventEnvelope } from "./ApplicationEvents.js"

/** The subject on which the referential publishes the submission of a DAS (JetStream stream `EVENTS`). */
export const DasSubmittedSubject = "events.referential.das.submitted"

export class DasSubmitted extends Schema.Class<DasSubmitted>("DasSubmitted")({
  ...eventEnvelope,
  type: Schema.Literal("das.submitted"),
  data: Das
}, { description: "A DAS was submitted (status SUBMITTED); a DAS is submitted once, so there is one such event per DAS." }) {}
