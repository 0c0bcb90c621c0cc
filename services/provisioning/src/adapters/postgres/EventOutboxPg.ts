import { MemberRemoved, MemberRemovedSubject } from "@portfolio/domain"
import { outboxWriter } from "@portfolio/platform"
import { Effect, Layer } from "effect"
import { EventOutbox } from "../../ports/EventOutbox.js"

export const EventOutboxPg = Layer.effect(
  EventOutbox,
  Effect.map(outboxWriter("provisioning", MemberRemoved, () => MemberRemovedSubject), (write) => EventOutbox.of({ append: (event) => write([event]) }))
)
