import { CallerIdentity, InsufficientScope, type Scope, scopeAllows, Unauthenticated } from "@portfolio/domain"
import { MemberRepository } from "../ports/MemberRepository.js"
import { Effect, Option } from "effect"

const roleRefused = (role: string, operation: string) =>
  new InsufficientScope({ detail: `role '${role}' does not allow ${operation}, which requires the tenant-admin role` })

/**
 * Defence in depth behind the gateway: the provisioning endpoints are for a tenant-admin whose
 * token carries the scope the operation needs, whatever reached this service. The assertion's
 * claims are checked, and so is provisioning's own record, because the gateway revokes a removed
 * member's tokens only when the `member.removed` event reaches it: until then a removed caller
 * must already be locked out here. Answers the caller's active membership.
 */
export const authorizeTenantAdmin = Effect.fn("authorizeTenantAdmin")(function*(caller: CallerIdentity, required: Scope, operation: string) {
  const members = yield* MemberRepository
  const membership = yield* members.findActiveBySub(caller.tenantId, caller.subject)
  if (Option.isNone(membership)) {
    // The gateway's words for the same token once the event has arrived: the caller cannot tell
    // which of the two refused it, and a client reacts to both alike (fetch a new token).
    return yield* new Unauthenticated({ detail: "The token has been revoked." })
  }
  if (caller.role !== "tenant-admin") return yield* roleRefused(caller.role, operation)
  if (caller.scope === "admin" || !scopeAllows(caller.scope, required)) {
    return yield* new InsufficientScope({ detail: `token scope '${caller.scope}' does not allow ${operation}, which requires '${required}'` })
  }
  // The token's role claim may be older than the membership it names.
  if (membership.value.arbRole !== "tenant-admin") return yield* roleRefused(membership.value.arbRole, operation)
  return membership.value
})

/**
 * The caller of a public operation made through the console's admin endpoints, for the member
 * `actorSub` the console names: a `write` caller whose role is the one provisioning's records give
 * the membership, never one the console claims, so that `authorizeTenantAdmin` judges it exactly
 * as it judges a token. Without an active membership the role is the least one; the authorization
 * then refuses the caller as it refuses a removed member (401).
 */
export const callerFromRecords = Effect.fn("callerFromRecords")(function*(tenantId: string, actorSub: string) {
  const members = yield* MemberRepository
  const membership = yield* members.findActiveBySub(tenantId, actorSub)
  return new CallerIdentity({
    tenantId,
    subject: actorSub,
    role: Option.match(membership, { onNone: () => "viewer" as const, onSome: (member) => member.arbRole }),
    scope: "write"
  })
})

/**
 * The SCIM endpoints answer a tenant's SCIM token and nothing else (docs/scim.md): the gateway
 * asserts it with the role `scim`, and may read and write the tenant's Users with it.
 */
export const authorizeScim = (caller: CallerIdentity) =>
  caller.role === "scim" && caller.scope === "write"
    ? Effect.void
    : Effect.fail(new InsufficientScope({ detail: "The SCIM endpoints take a tenant's SCIM token, and no other credential." }))
