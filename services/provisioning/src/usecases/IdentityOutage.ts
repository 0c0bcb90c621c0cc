import { Unavailable } from "@portfolio/domain"
import type { IdentityProviderUnavailable } from "../ports/IdentityProvider.js"
import { Effect } from "effect"

/**
 * An identity provider outage, as callers see it: 503 `UNAVAILABLE`, retryable. The reason goes to
 * the log only; it may name internal hosts.
 */
export const identityOutage = (error: IdentityProviderUnavailable) =>
  Effect.andThen(
    Effect.logWarning("identity provider unavailable", { reason: error.reason }),
    Effect.fail(new Unavailable({ detail: "The identity provider is unavailable; nothing was changed. Retry shortly." }))
  )
