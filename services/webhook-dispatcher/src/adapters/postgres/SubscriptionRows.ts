import { Option, Schema } from "effect"
import type { DeliveryTarget } from "../../domain/Subscription.js"
import type { SecretSealerShape } from "./SealedSecrets.js"

/** The columns of a subscription an attempt needs (DeliveryTarget), sealed secrets as stored. */
export const TargetColumns = Schema.Struct({
  tenantId: Schema.String,
  url: Schema.String,
  state: Schema.Literals(["enabled", "disabled"]),
  sealedSecret: Schema.Uint8Array,
  sealedPreviousSecret: Schema.NullOr(Schema.Uint8Array),
  previousSecretExpiresAt: Schema.NullOr(Schema.Date)
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

/** Subscriptions whose opened secrets are kept at most; past it the cache starts over (subscriptions are few, rotations rare). */
const MaxOpened = 10_000

const sameBytes = (a: Uint8Array | null, b: Uint8Array | null) =>
  a === null || b === null ? a === b : Buffer.compare(a, b) === 0

/**
 * openTarget for the hot path: a subscription's secrets are opened once per sealed value, not
 * once per attempt (an AES-GCM opening per delivery showed in the dispatcher's profile), and a row
 * equal to the last one seen gives back the same target, allocating nothing. The sealed bytes are
 * compared, so a rotation or a re-seal is seen at the next claim.
 */
export const makeTargetOpener = (sealer: SecretSealerShape) => {
  const opened = new Map<string, { readonly row: typeof TargetColumns.Type; readonly target: DeliveryTarget }>()
  return (id: string, row: typeof TargetColumns.Type): DeliveryTarget => {
    const known = opened.get(id)
    if (known !== undefined && sameBytes(known.row.sealedSecret, row.sealedSecret) && sameBytes(known.row.sealedPreviousSecret, row.sealedPreviousSecret)) {
      const was = known.row
      if (was.tenantId === row.tenantId && was.url === row.url && was.state === row.state &&
        was.previousSecretExpiresAt?.getTime() === row.previousSecretExpiresAt?.getTime()) return known.target
      const target = { ...known.target, tenantId: row.tenantId, url: row.url, state: row.state, previousSecretExpiresAt: row.previousSecretExpiresAt }
      opened.set(id, { row, target })
      return target
    }
    const target = openTarget(sealer, id, row)
    if (opened.size >= MaxOpened) opened.clear()
    opened.set(id, { row, target })
    return target
  }
}
