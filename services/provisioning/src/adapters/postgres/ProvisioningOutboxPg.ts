import { MemberRemoved, MemberRemovedSubject } from "@portfolio/domain"
import { outboxWriter } from "@portfolio/platform/nats"
import { Effect, Layer } from "effect"
import { ProvisioningOutbox } from "../../ports/ProvisioningOutbox.js"

export const ProvisioningOutboxPg = Layer.effect(
  ProvisioningOutbox,
  Effect.map(outboxWriter("provisioning", MemberRemoved, () => MemberRemovedSubject), (append) => ProvisioningOutbox.of({ append }))
)
