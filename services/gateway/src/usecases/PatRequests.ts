import {
  ApprovedPatRequest,
  type NewPatRequest,
  PatRequest,
  type PageQuery,
  type PatRequestApprover,
  PublicPageSize,
  Uuid
} from "@portfolio/domain"
import { CursorTime, cursorCodec, keysetPage, mapPage } from "@portfolio/platform/http"
import { newId } from "@portfolio/platform/ids"
import { UnitOfWork } from "@portfolio/platform/sql"
import { DateTime, Effect, Option, Schema } from "effect"
import type { AdminCall } from "../domain/OperatorActions.js"
import {
  checkDecision,
  currentRequester,
  type Decider,
  deciderOf,
  notPending,
  pendingCapRefusal,
  recordedDecider,
  requestAsOf,
  requestExpiry,
  requestNotFound,
  scopeRefusal
} from "../domain/PatRequestRules.js"
import { MembershipDesk } from "../ports/MembershipDesk.js"
import { type PatRequestDecision, type PatRequestFilter, PatRequestRepository } from "../ports/PatRequestRepository.js"
import { PatRepository } from "../ports/PatRepository.js"
import { mintPat } from "./ManagePats.js"
import { recordAction } from "./SecurityLog.js"

/**
 * The self-service workflow of docs/product-rules.md#pat-requests: a member files a justified
 * request, a tenant-admin (or an operator) approves it, which mints the requester's token, or
 * denies it with a reason.
 */

/**
 * Files a pending request: refused (a 400) beyond the member's role, and (a 409) when the member
 * has PatRequestPendingMax requests pending in the tenant already; a refusal keeps nothing.
 */
export const filePatRequest = Effect.fn("gateway.filePatRequest")(function*(input: NewPatRequest, by: AdminCall) {
  const refusal = scopeRefusal(input.role, input.scope)
  if (Option.isSome(refusal)) return yield* refusal.value
  const requests = yield* PatRequestRepository
  const now = yield* DateTime.now
  const unitOfWork = yield* UnitOfWork
  const request = new PatRequest({
    id: yield* newId,
    tenantId: input.tenantId,
    userSub: input.userSub,
    email: input.email,
    role: input.role,
    scope: input.scope,
    days: input.days,
    justification: input.justification,
    status: "pending",
    createdAt: now,
    expiresAt: requestExpiry(now),
    decidedAt: null,
    decidedBy: null,
    reason: null,
    patId: null
  })
  // The count and the insert in one unit of work holding the member's filings: of concurrent
  // filings, each counts those before it, so none passes the cap.
  yield* unitOfWork.run(
    Effect.gen(function*() {
      const pending = yield* requests.lockPendingOf({ tenantId: request.tenantId, userSub: request.userSub }, now)
      const capped = pendingCapRefusal(pending)
      if (Option.isSome(capped)) {
        yield* Effect.logInfo("PAT request refused: too many pending", { tenantId: request.tenantId, pending })
        return yield* capped.value
      }
      yield* requests.insert(request)
      yield* recordAction(by, request.createdAt, {
        tenantId: request.tenantId,
        action: "pat_requested",
        target: request.id,
        detail: { requester: request.email, scope: request.scope, days: request.days }
      })
    })
  )
  yield* Effect.logInfo("PAT request filed", { id: request.id, tenantId: request.tenantId, scope: request.scope, days: request.days })
  return request
})

/** What a caller filters by; the time and the page are the use case's. */
type PatRequestsFilter = Omit<PatRequestFilter, "now" | "after" | "limit">

export const listPatRequests = Effect.fn("gateway.listPatRequests")(function*(filter: PatRequestsFilter) {
  const requests = yield* PatRequestRepository
  const now = yield* DateTime.now
  return (yield* requests.list({ ...filter, now })).map((request) => requestAsOf(request, now))
})

/** Newest first: a page resumes after the last request's filing time (epoch milliseconds) and id. */
const PatRequestCursor = cursorCodec("pat-requests", Schema.Tuple([CursorTime, Uuid]))

/** A page of `listPatRequests` (docs/product-rules.md#lists); the cursor is bound to the tenant and filters. */
export const listPatRequestsPage = Effect.fn("gateway.listPatRequestsPage")(function*(filter: PatRequestsFilter, query: PageQuery) {
  const requests = yield* PatRequestRepository
  const now = yield* DateTime.now
  const { status, tenantId, userSub } = filter
  const page = yield* keysetPage({
    codec: PatRequestCursor,
    scope: { tenantId, status: status ?? null, userSub: userSub ?? null },
    query,
    size: PublicPageSize,
    read: (after, limit) =>
      requests.list({
        tenantId,
        status,
        userSub,
        now,
        after: Option.getOrUndefined(Option.map(after, ([createdAt, id]) => ({ createdAt: DateTime.makeUnsafe(createdAt), id }))),
        limit
      }),
    keyOf: (last) => [DateTime.toEpochMillis(last.createdAt), last.id] as const
  })
  return mapPage(page, (request) => requestAsOf(request, now))
})

/** The request, if `decider` may decide it now. */
const decidable = (id: string, decider: Decider) =>
  Effect.gen(function*() {
    const requests = yield* PatRequestRepository
    const found = yield* requests.find(id)
    if (Option.isNone(found)) return yield* requestNotFound(id)
    return yield* Effect.fromResult(checkDecision(requestAsOf(found.value, yield* DateTime.now), decider))
  })

/**
 * Settles the pending request, or fails as the request now stands: another decision may have
 * come between the check and this (two admins at once), and only one of them wins.
 */
const settle = (id: string, decision: PatRequestDecision) =>
  Effect.gen(function*() {
    const requests = yield* PatRequestRepository
    const settled = yield* requests.settle(id, decision)
    if (Option.isSome(settled)) return settled.value
    const current = yield* requests.find(id)
    return yield* Option.match(current, { onNone: () => requestNotFound(id), onSome: (request) => notPending(requestAsOf(request, decision.decidedAt)) })
  })

const logDecision = (request: PatRequest, extra: Record<string, string>) =>
  Effect.logInfo(`PAT request ${request.status}`, {
    id: request.id,
    tenantId: request.tenantId,
    decidedBy: request.decidedBy?.userSub,
    decidedByRole: request.decidedBy?.role,
    ...extra
  })

/**
 * Approves a pending request and mints the requester's token (their e-mail and role as provisioning
 * holds them now, refused when they left or their role no longer allows the scope; the requested
 * scope; the requested days counted from now) in one unit of work: of concurrent approvals, exactly one
 * settles the request, and only that one stores a token and enters the security log. The token is
 * answered once, to the approver; the log has its prefix.
 */
export const approvePatRequest = Effect.fn("gateway.approvePatRequest")(function*(
  by: AdminCall,
  id: string,
  approver: PatRequestApprover | undefined
) {
  const decider = deciderOf(by.subject, approver)
  const request = yield* decidable(id, decider)
  const member = yield* Effect.flatMap(MembershipDesk, (memberships) => memberships.current(request.tenantId, request.userSub))
  const requester = yield* Effect.fromResult(currentRequester(request, member))
  const now = yield* DateTime.now
  const { created, record } = yield* mintPat(
    { tenantId: request.tenantId, userSub: request.userSub, email: requester.email, role: requester.role, scope: request.scope, days: request.days },
    now
  )
  const unitOfWork = yield* UnitOfWork
  const approved = yield* unitOfWork.run(
    Effect.gen(function*() {
      const settled = yield* settle(id, { status: "approved", decidedAt: now, decidedBy: recordedDecider(decider), patId: record.id })
      yield* Effect.flatMap(PatRepository, (store) => store.insert(record))
      yield* recordAction(by, now, {
        tenantId: settled.tenantId,
        action: "pat_request_approved",
        target: settled.id,
        detail: { requester: record.email, role: record.role, scope: record.scope, tokenPrefix: record.tokenPrefix }
      })
      return settled
    })
  )
  yield* logDecision(approved, { patId: record.id, tokenPrefix: record.tokenPrefix })
  return new ApprovedPatRequest({ request: approved, pat: created })
})

/** Denies a pending request with a reason, and records the denial in the same unit of work. */
export const denyPatRequest = Effect.fn("gateway.denyPatRequest")(function*(
  by: AdminCall,
  id: string,
  approver: PatRequestApprover | undefined,
  reason: string
) {
  const decider = deciderOf(by.subject, approver)
  yield* decidable(id, decider)
  const now = yield* DateTime.now
  const unitOfWork = yield* UnitOfWork
  const denied = yield* unitOfWork.run(
    Effect.tap(settle(id, { status: "denied", decidedAt: now, decidedBy: recordedDecider(decider), reason }), (settled) =>
      recordAction(by, now, {
        tenantId: settled.tenantId,
        action: "pat_request_denied",
        target: settled.id,
        detail: { requester: settled.email, reason }
      }))
  )
  yield* logDecision(denied, {})
  return denied
})
