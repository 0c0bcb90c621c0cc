import { ReferentialEvent, referentialEventSubject } from "@portfolio/domain"
import { outboxWriter } from "@portfolio/platform"
import { Effect, Layer } from "effect"
import { ReferentialEvents } from "../../ports/ReferentialEvents.js"

export const ReferentialEventsPg = Layer.effect(
  ReferentialEvents,
  Effect.map(outboxWriter("referential", ReferentialEvent, referentialEventSubject), (append) => ReferentialEvents.of({ append }))
)
