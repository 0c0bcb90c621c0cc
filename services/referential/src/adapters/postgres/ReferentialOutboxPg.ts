import { ReferentialEvent, referentialEventSubject } from "@portfolio/domain"
import { outboxWriter } from "@portfolio/platform/nats"
import { Effect, Layer } from "effect"
import { ReferentialOutbox } from "../../ports/ReferentialOutbox.js"

export const ReferentialOutboxPg = Layer.effect(
  ReferentialOutbox,
  Effect.map(outboxWriter("referential", ReferentialEvent, referentialEventSubject), (append) => ReferentialOutbox.of({ append }))
)
