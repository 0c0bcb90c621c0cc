import type { PatRequestStatus } from "@portfolio/domain"
import { Effect } from "effect"
import type { Membership } from "../ports/DirectoryDesk.js"
import { type NewTokenRequest, TokenDesk } from "../ports/TokenDesk.js"
import { actorOf, type Member, recordSecurityEvent } from "./SignIn.js"

/**
 * The token pages' use cases (docs/product-rules.md#pat-requests): the gateway holds requests and
 * tokens and applies their rules; the console acts for the signed-in member, who is re-read from
 * provisioning on every page, and records each action in the security log.
 */

const logAs = (member: Member, membership: Membership) => ({
  tenantIds: [membership.tenantId],
  actorSub: member.account.subject,
  actorEmail: member.account.email
})

/** The member's own tokens and a page of their requests (the newest, or from `cursor`), for their tokens page. */
export const myTokens = (member: Member, membership: Membership, cursor?: string) =>
  Effect.gen(function*() {
    const desk = yield* TokenDesk
    const actor = actorOf(member, membership)
    const [tokens, page] = yield* Effect.all([desk.tokens(actor), desk.requests(actor, { userSub: actor.userSub }, cursor)], { concurrency: 2 })
    return { tokens, requests: page.items, nextRequests: page.next }
  })

export const requestToken = (member: Member, membership: Membership, request: NewTokenRequest) =>
  Effect.gen(function*() {
    const filed = yield* (yield* TokenDesk).file(actorOf(member, membership), request)
    yield* recordSecurityEvent({ ...logAs(member, membership), action: "pat_requested", target: filed.id, detail: { scope: filed.scope, days: filed.days } })
    return filed
  })

export const revokeMyToken = (member: Member, membership: Membership, patId: string) =>
  Effect.gen(function*() {
    const revoked = yield* (yield* TokenDesk).revoke(actorOf(member, membership), patId)
    yield* recordSecurityEvent({ ...logAs(member, membership), action: "pat_revoked", target: revoked.id })
    return revoked
  })

/**
 * A tenant-admin's view: a page of the tenant's requests in a state (the newest, or from `cursor`, a
 * previous page's `next`), and the cursor of the older ones while there are more: every pending
 * request is reachable, however many the tenant's members filed.
 */
export const tenantRequests = (member: Member, membership: Membership, status: PatRequestStatus, cursor?: string) =>
  Effect.flatMap(TokenDesk, (desk) =>
    Effect.map(desk.requests(actorOf(member, membership), { status }, cursor), (page) => ({ requests: page.items, next: page.next })))

export const approveRequest = (member: Member, membership: Membership, requestId: string) =>
  Effect.gen(function*() {
    const approved = yield* (yield* TokenDesk).approve(actorOf(member, membership), requestId)
    yield* recordSecurityEvent({
      ...logAs(member, membership),
      action: "pat_request_approved",
      target: requestId,
      detail: { requester: approved.request.email, scope: approved.pat.scope, tokenPrefix: approved.pat.tokenPrefix }
    })
    return approved
  })

export const denyRequest = (member: Member, membership: Membership, requestId: string, reason: string) =>
  Effect.gen(function*() {
    const denied = yield* (yield* TokenDesk).deny(actorOf(member, membership), requestId, reason)
    yield* recordSecurityEvent({ ...logAs(member, membership), action: "pat_request_denied", target: requestId, detail: { requester: denied.email } })
    return denied
  })
