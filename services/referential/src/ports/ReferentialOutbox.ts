import type { ReferentialEvent } from "@portfolio/domain"
import type { OutboxShape } from "@portfolio/platform/nats"
import { Context } from "effect"

/**
 * The referential's outbox (application events, das.submitted), the platform's outbox port for its
 * events: appended inside a use case's `writing`.
 */
export class ReferentialOutbox extends Context.Service<ReferentialOutbox, OutboxShape<ReferentialEvent>>()("@portfolio/referential/ReferentialOutbox") {}
