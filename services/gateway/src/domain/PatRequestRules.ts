import {
  type ArbRole,
  Conflict,
  InsufficientScope,
  InvalidRequest,
  NotFound,
  PatRequest,
  type PatRequestApprover,
  PatRequestDecider,
  PatRequestLifetimeDays,
  PatRequestPendingMax,
  type Scope,
  scopeAllows,
  widestScopeOf, trusted } from "@portfolio/domain"
import { DateTime, Result, Option } from "effect"

/**
 * The rules of PAT requests (docs/product-rules.md#pat-requests), on plain values: what may be
 * requested, and who may decide which request.
 */

/** A member may not ask for more than their role allows: a `write` token of a viewer is refused. */
export const scopeRefusal = (role: ArbRole, scope: Scope): Option.Option<InvalidRequest> =>
  scopeAllows(widestScopeOf(role), scope)
    ? Option.none()
    : Option.some(
      new InvalidRequest({
        detail: `a member with the role '${role}' may request a token of scope '${widestScopeOf(role)}' at most, not '${scope}'`
      })
    )

/**
 * A member holds at most PatRequestPendingMax pending requests in a tenant: with that many pending
 * (`pending`, counted with the expired ones left out), one more is refused, a 409 that keeps nothing.
 */
export const pendingCapRefusal = (pending: number): Option.Option<Conflict> =>
  pending < PatRequestPendingMax
    ? Option.none()
    : Option.some(
      new Conflict({
        detail: `you have ${pending} pending PAT requests in this tenant, the most a member may have (${PatRequestPendingMax}): wait for a tenant-admin to decide one (or ask them to deny one you no longer need), or for one to expire ${PatRequestLifetimeDays} days after its filing. Nothing was filed.`
      })
    )

/**
 * Who decides: the tenant member the console names, or else the operator who signed the call.
 * An operator has no e-mail, so the decider's e-mail is null then.
 */
export type Decider =
  | { readonly kind: "operator"; readonly subject: string }
  | { readonly kind: "member"; readonly approver: PatRequestApprover }

export const deciderOf = (operatorSubject: string, approver: PatRequestApprover | undefined): Decider =>
  approver === undefined ? { kind: "operator", subject: operatorSubject } : { kind: "member", approver }

export const recordedDecider = (decider: Decider): PatRequestDecider =>
  decider.kind === "operator"
    ? new PatRequestDecider({ userSub: decider.subject, email: null, role: "operator" })
    : new PatRequestDecider({ userSub: decider.approver.userSub, email: decider.approver.email, role: decider.approver.role })

/** Until when a request filed at `createdAt` may be decided. */
export const requestExpiry = (createdAt: DateTime.Utc): DateTime.Utc => DateTime.add(createdAt, { days: PatRequestLifetimeDays })

/** The request as it stands at `now`: a pending one past its expiry is `expired`. */
export const requestAsOf = (request: PatRequest, now: DateTime.Utc): PatRequest =>
  request.status === "pending" && DateTime.isGreaterThanOrEqualTo(now, request.expiresAt)
    ? trusted(PatRequest, { ...request, status: "expired" })
    : request

/**
 * Who the approval's token is for: the requester as the record of memberships holds them now (their
 * e-mail and role), never as the request names them, which is only what they were when it was
 * filed. None when they are no longer a member; a role that no longer allows the requested scope
 * refuses too. Either is a 409 that changes nothing.
 */
export const currentRequester = (
  request: PatRequest,
  member: Option.Option<{ readonly email: string; readonly role: ArbRole }>
): Result.Result<{ readonly email: string; readonly role: ArbRole }, Conflict> => {
  if (Option.isNone(member)) {
    return Result.fail(
      new Conflict({
        detail: `PAT request ${request.id} cannot be approved: ${request.email} is no longer a member of the tenant. Nothing was minted; deny the request or let it close.`
      })
    )
  }
  const { role } = member.value
  return scopeAllows(widestScopeOf(role), request.scope)
    ? Result.succeed(member.value)
    : Result.fail(
      new Conflict({
        detail: `PAT request ${request.id} cannot be approved: its requester's role is now '${role}', which allows a token of scope '${widestScopeOf(role)}' at most, not '${request.scope}'. Nothing was minted; the member files a new request.`
      })
    )
}

/** Why a request closes when its requester is removed from the tenant; the requester and the admins read it. */
export const RequesterRemovedReason = "Closed undecided: the requester was removed from the tenant."

export const requestNotFound = (id: string) => new NotFound({ detail: `No PAT request has the id ${id}.` })

export const notPending = (request: Pick<PatRequest, "id" | "status">) =>
  new Conflict({
    detail: request.status === "expired"
      ? `PAT request ${request.id} is expired: it was not decided within ${PatRequestLifetimeDays} days; the member files a new one.`
      : request.status === "closed"
      ? `PAT request ${request.id} is closed: its requester was removed from the tenant; it can no longer be decided.`
      : `PAT request ${request.id} is ${request.status}: only a pending request can be approved or denied.`
  })

/**
 * May `decider` approve or deny `request`? A member of another tenant learns nothing of it (the
 * same 404 as an unknown id); only a tenant-admin decides, and never on their own request; an
 * operator decides any. The state is checked last, so that who may not decide learns nothing of it.
 */
export const checkDecision = (
  request: PatRequest,
  decider: Decider
): Result.Result<PatRequest, NotFound | InsufficientScope | Conflict> => {
  if (decider.kind === "member") {
    const { approver } = decider
    if (approver.tenantId !== request.tenantId) return Result.fail(requestNotFound(request.id))
    if (approver.role !== "tenant-admin") {
      return Result.fail(
        new InsufficientScope({ detail: `deciding a PAT request requires the role 'tenant-admin' in the tenant; the approver has '${approver.role}'` })
      )
    }
    if (approver.userSub === request.userSub) {
      return Result.fail(
        new InsufficientScope({ detail: "a tenant-admin may not decide their own PAT request: another tenant-admin or an operator decides it" })
      )
    }
  }
  return request.status === "pending" ? Result.succeed(request) : Result.fail(notPending(request))
}
