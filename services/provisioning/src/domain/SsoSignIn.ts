import type { ArbRole } from "@portfolio/domain"

/** How long a begun sign-in waits for its callback: a person at the provider's page, not an automaton. */
export const SsoSignInLifetimeMs = 10 * 60_000

/**
 * The role of a person signing in for the first time (docs/security.md, "Single sign-on"): the
 * first mapping of the connection, in its order, whose value the role claim holds (a string or a
 * list of strings, as `groups` is); otherwise the default role.
 */
export const roleFromClaims = (
  connection: {
    readonly roleClaim: string | null
    readonly roleMap: ReadonlyArray<{ readonly value: string; readonly role: ArbRole }>
    readonly defaultRole: ArbRole
  },
  claims: Readonly<Record<string, unknown>>
): ArbRole => {
  if (connection.roleClaim === null) return connection.defaultRole
  const raw = claims[connection.roleClaim]
  const values = Array.isArray(raw) ? raw.filter((value): value is string => typeof value === "string") : typeof raw === "string" ? [raw] : []
  return connection.roleMap.find((mapping) => values.includes(mapping.value))?.role ?? connection.defaultRole
}

/** The domain of an e-mail, in lower case: what the connection's domains are compared with. */
export const domainOf = (email: string) => email.slice(email.lastIndexOf("@") + 1).toLowerCase()

/**
 * Whether the value of the connection's e-mail-verified claim says verified: `true`, as OpenID
 * Connect's `email_verified` is, or the string and number forms some providers send for their own
 * claims. Anything else, its absence first, is not.
 */
export const verifiedBy = (value: unknown): boolean => value === true || value === "true" || value === 1
