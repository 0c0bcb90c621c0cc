import type { MemberRemoved } from "@portfolio/domain"
import type { OutboxShape } from "@portfolio/platform/nats"
import { Context } from "effect"

/** Provisioning's outbox (member.removed), the platform's outbox port for its events. */
export class ProvisioningOutbox extends Context.Service<ProvisioningOutbox, OutboxShape<MemberRemoved>>()("@portfolio/provisioning/ProvisioningOutbox") {}
