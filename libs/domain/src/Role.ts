import { Schema } from "effect"

/** The six tenant roles of the product; all six are assignable by invitation (docs/product-rules.md#invitations-and-members). */
export const ArbRole = Schema.Literals(["tenant-admin", "architect", "portfolio-manager", "contributor", "viewer", "arb-member"])
export type ArbRole = typeof ArbRole.Type

/** The scope a token carries and an endpoint requires. `write` includes `read`. */
export const Scope = Schema.Literals(["read", "write"])
export type Scope = typeof Scope.Type

export const scopeAllows = (granted: Scope, required: Scope): boolean => granted === "write" || required === "read"

/**
 * The widest scope a PAT of a member of this role may carry (docs/product-rules.md#pat-requests):
 * a viewer's role is to read, so their tokens read too; every other role may also write.
 */
export const widestScopeOf = (role: ArbRole): Scope => (role === "viewer" ? "read" : "write")
