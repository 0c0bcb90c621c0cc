import type { WebhookEventKind } from "@portfolio/domain"

/** A subscription as the use cases hold it: its secrets in clear (the adapter seals them at rest). */
export interface SubscriptionRecord {
  readonly id: string
  readonly tenantId: string
  readonly url: string
  readonly description: string
  /** null: every kind, those added to the catalogue later included. */
  readonly kinds: ReadonlyArray<WebhookEventKind> | null
  readonly state: "enabled" | "disabled"
  readonly disabledReason: "manual" | "consecutive_failures" | null
  readonly consecutiveFailures: number
  readonly secret: string
  /** The secret before the last rotation, still signing until `previousSecretExpiresAt`. */
  readonly previousSecret: string | null
  readonly previousSecretExpiresAt: Date | null
  readonly createdAt: Date
  readonly updatedAt: Date
}

/** What an attempt needs of its subscription. */
export type DeliveryTarget = Pick<SubscriptionRecord, "id" | "tenantId" | "url" | "state" | "secret" | "previousSecret" | "previousSecretExpiresAt">

/** The secrets that sign a POST made at `now`: the current one, then the previous one while in its grace. */
export const signingSecrets = (subscription: DeliveryTarget, now: Date): ReadonlyArray<string> =>
  subscription.previousSecret !== null && subscription.previousSecretExpiresAt !== null &&
    subscription.previousSecretExpiresAt.getTime() > now.getTime()
    ? [subscription.secret, subscription.previousSecret]
    : [subscription.secret]
