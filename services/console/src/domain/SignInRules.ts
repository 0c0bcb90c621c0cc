/**
 * The sign-in rules of docs/product-rules.md#console-sign-in, as pure functions of what was
 * recorded: attempts still in flight count as failures until they succeed, so that parallel
 * guesses cannot exceed the allowance between a check and its outcome.
 */
export interface LockoutPolicy {
  /** Failed (or unfinished) attempts on one e-mail within `windowMs` before it is locked. */
  readonly maxFailuresPerEmail: number
  /** Failed attempts from one address within `windowMs`, all e-mails together. */
  readonly maxFailuresPerAddress: number
  readonly windowMs: number
}

export interface RecentAttempts {
  /** Failures and attempts in flight on the e-mail within the window, with the latest one's time. */
  readonly emailFailures: number
  readonly latestEmailFailureMs: number | undefined
  readonly addressFailures: number
  readonly latestAddressFailureMs: number | undefined
}

export type Admission = { readonly _tag: "Admitted" } | { readonly _tag: "Locked"; readonly retryAfterMs: number }

export const admitAttempt = (policy: LockoutPolicy, recent: RecentAttempts, nowMs: number): Admission => {
  const until = (latest: number | undefined) => Math.max(1_000, (latest ?? nowMs) + policy.windowMs - nowMs)
  if (recent.emailFailures >= policy.maxFailuresPerEmail) return { _tag: "Locked", retryAfterMs: until(recent.latestEmailFailureMs) }
  if (recent.addressFailures >= policy.maxFailuresPerAddress) return { _tag: "Locked", retryAfterMs: until(recent.latestAddressFailureMs) }
  return { _tag: "Admitted" }
}

/** E-mails are compared case-insensitively everywhere in the product. */
export const emailKey = (email: string) => email.trim().toLowerCase()

/** Minutes, rounded up, as a person reads "try again in N minutes". */
export const minutesToWait = (ms: number) => Math.max(1, Math.ceil(ms / 60_000))

/**
 * The memberships a session may act in (docs/security.md, "Single sign-on"): one opened through a
 * tenant's provider, that tenant's only, since that provider vouches for no other tenant; one opened
 * with a password, all but those whose single sign-on is required (break-glass accounts excepted).
 */
export const usableMemberships = <M extends { readonly tenantId: string }>(
  account: { readonly memberships: ReadonlyArray<M>; readonly ssoOnlyTenantIds: ReadonlyArray<string> },
  ssoTenantId: string | null
): ReadonlyArray<M> =>
  account.memberships.filter((m) => (ssoTenantId === null ? !account.ssoOnlyTenantIds.includes(m.tenantId) : m.tenantId === ssoTenantId))
