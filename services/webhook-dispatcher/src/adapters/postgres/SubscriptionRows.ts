import { Option, Schema } from "effect"
import type { DeliveryTarget } from "../../domain/Subscription.js"
import type { SecretSealerShape } from "./SealedSecrets.js"

/** The columns of a subscription an attempt needs (DeliveryTarget), sealed secrets as stored. */
export const TargetColumns = Schema.Struct({
  tenantId: Schema.String,
  url: Schema.String,
  state: Schema.Literal("enabled", "disabled"),
  sealedSecret: Schema.Uint8ArrayFromSelf,
  sealedPreviousSecret: Schema.NullOr(Schema.Uint8ArrayFromSelf),
  previousSecretExpiresAt: Schema.NullOr(Schema.DateFromSelf)
})

/**
 * A subscription's columns with its secrets opened. A secret no key opens (INTERNAL_SECRET replaced
 * without its previous value) cannot sign: a defect to see, never an unsigned POST
 * (docs/security.md#webhooks); the subscription is unusable until its secret is rotated.
 */
export const openTarget = (sealer: SecretSealerShape, id: string, row: typeof TargetColumns.Type): DeliveryTarget => {
  const secret = sealer.openSecret(id, row.sealedSecret)
  if (Option.isNone(secret)) throw new Error(`the signing secret of subscription ${id} does not open with INTERNAL_SECRET or INTERNAL_SECRET_PREVIOUS`)
  const previous = row.sealedPreviousSecret === null ? Option.none() : sealer.openSecret(id, row.sealedPreviousSecret)
  return {
    id,
    tenantId: row.tenantId,
    url: row.url,
    state: row.state,
    secret: secret.value,
    previousSecret: Option.getOrNull(previous),
    previousSecretExpiresAt: row.previousSecretExpiresAt
  }
}
