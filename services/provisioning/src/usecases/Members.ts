import { type CallerIdentity, InputText, LastTenantAdmin, MemberRemoved, NotFound, type PageQuery, PublicPageSize } from "@portfolio/domain"
import { ProvisioningOutbox } from "../ports/ProvisioningOutbox.js"
import { MemberRepository } from "../ports/MemberRepository.js"
import { cursorCodec, CursorTime, keysetPage, type RequestOrigin } from "@portfolio/platform/http"
import { newId } from "@portfolio/platform/ids"
import { UnitOfWork } from "@portfolio/platform/sql"
import { DateTime, Effect, Option, Schema } from "effect"
import { authorizeTenantAdmin } from "./Authorization.js"
import { recordSecurityEvent } from "./SecurityLog.js"

/** Active members of the caller's tenant, most recently granted first. */
export const listMembers = Effect.fn("listMembers")(function*(caller: CallerIdentity) {
  yield* authorizeTenantAdmin(caller, "read", "GET /tenant/invitations/members")
  const members = yield* MemberRepository
  return yield* members.listActive(caller.tenantId)
})

/** Most recently granted first: a page resumes after the last member's grant time (epoch milliseconds) and userSub. */
const MemberCursor = cursorCodec("members", Schema.Tuple(CursorTime, InputText))

/** A page of `listMembers` (docs/product-rules.md#lists); removing a member between two pages shifts nothing. */
export const listMembersPage = Effect.fn("listMembersPage")(function*(caller: CallerIdentity, query: PageQuery) {
  yield* authorizeTenantAdmin(caller, "read", "GET /tenant/invitations/members")
  const members = yield* MemberRepository
  return yield* keysetPage({
    codec: MemberCursor,
    scope: { tenantId: caller.tenantId },
    query,
    size: PublicPageSize,
    read: (after, limit) =>
      members.listActive(caller.tenantId, { after: Option.map(after, ([grantedAt, userSub]) => ({ grantedAt: DateTime.unsafeMake(grantedAt), userSub })), limit }),
    keyOf: (last) => [DateTime.toEpochMillis(last.grantedAt), last.userSub] as const
  })
})

/**
 * Irreversible removal from the caller's tenant. The row stays so that records keep their userSub;
 * `member.removed` is written in the same unit of work so that the gateway revokes the person's
 * tokens in this tenant. The 404 reads the same whether the userSub is unknown everywhere or known
 * only in another tenant. A tenant keeps at least one active tenant-admin (as GitHub keeps an
 * organisation's last owner): the check runs on locked admin rows inside the unit of work, so two
 * concurrent removals of the last two admins cannot both pass it. With an `origin` (the public
 * API's door), `member_removed` is recorded in the same unit of work.
 */
export const removeMember = Effect.fn("removeMember")(function*(caller: CallerIdentity, userSub: string, origin?: RequestOrigin) {
  const remover = yield* authorizeTenantAdmin(caller, "write", "DELETE /tenant/invitations/members/{userSub}")
  const members = yield* MemberRepository
  const outbox = yield* ProvisioningOutbox
  const unitOfWork = yield* UnitOfWork
  yield* unitOfWork.run(
    Effect.gen(function*() {
      const admins = yield* members.lockActiveAdmins(caller.tenantId)
      if (admins.length === 1 && admins[0] === userSub) {
        return yield* new LastTenantAdmin({
          detail: "This member is the tenant's last tenant-admin, and the tenant must keep one tenant-admin: invite another tenant-admin first."
        })
      }
      const now = yield* DateTime.now
      // Read before the removal, after which no read returns the member: the entry names their e-mail.
      const removed = yield* members.findActiveBySub(caller.tenantId, userSub)
      if (!(yield* members.remove(caller.tenantId, userSub, now))) {
        return yield* new NotFound({ detail: "No member with this userSub in the tenant." })
      }
      yield* outbox.append([
        MemberRemoved.make({ id: yield* newId, type: "member.removed", occurredAt: now, tenantId: caller.tenantId, userSub })
      ])
      yield* recordSecurityEvent(origin, {
        tenantId: caller.tenantId,
        at: now,
        actorSub: caller.subject,
        actorEmail: remover.userEmail,
        action: "member_removed",
        target: userSub,
        detail: Option.match(removed, { onNone: () => ({}), onSome: (member) => ({ email: member.userEmail }) })
      })
    })
  )
})
