import { Schema } from "effect"
import { DateTimeUtc, Uuid } from "../Wire.js"

/** Subject on which provisioning publishes `member.removed` (JetStream stream `EVENTS`, subjects `events.>`). */
export const MemberRemovedSubject = "events.provisioning.member.removed"

/**
 * A member lost access to a tenant: consumers revoke what they hold for that (tenant, userSub),
 * idempotently on `id`, which is also the JetStream message id.
 */
export class MemberRemoved extends Schema.Class<MemberRemoved>("MemberRemoved")({
  id: Uuid,
  type: Schema.Literal("member.removed"),
  occurredAt: DateTimeUtc,
  tenantId: Uuid,
  userSub: Schema.String
}) {}
