import type { SubscriptionDisabled } from "@portfolio/domain"
import type { OutboxShape } from "@portfolio/platform/nats"
import { Context } from "effect"

/** The dispatcher's outbox (subscription.disabled), the platform's outbox port for its events. */
export class DispatcherOutbox extends Context.Service<DispatcherOutbox, OutboxShape<SubscriptionDisabled>>()("@portfolio/webhook-dispatcher/DispatcherOutbox") {}
