import { type ArbRole, type CallerIdentity, InputText, LastTenantAdmin, MemberRemoved, NotFound, type PageQuery, PublicPageSize } from "@portfolio/domain"
import { ProvisioningOutbox } from "../ports/ProvisioningOutbox.js"
import { MemberRepository } from "../ports/MemberRepository.js"
import { ScimUserRepository } from "../ports/ScimUserRepository.js"
import { cursorCodec, CursorTime, keysetPage, type RequestOrigin } from "@portfolio/platform/http"
import { newId } from "@portfolio/platform/ids"
import { UnitOfWork } from "@portfolio/platform/sql"
import { DateTime, Effect, Option, Schema } from "effect"
import { type Actor, tenantAdminActor } from "./Actor.js"
import { authorizeTenantAdmin } from "./Authorization.js"
import { recordSecurityEvent } from "./SecurityLog.js"

/** Active members of the caller's tenant, most recently granted first. */
export const listMembers = Effect.fn("listMembers")(function*(caller: CallerIdentity) {
  yield* authorizeTenantAdmin(caller, "read", "GET /tenant/invitations/members")
  const members = yield* MemberRepository
  return yield* members.listActive(caller.tenantId)
})

/** Most recently granted first: a page resumes after the last member's grant time (epoch milliseconds) and userSub. */
const MemberCursor = cursorCodec("members", Schema.Tuple([CursorTime, InputText]))

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
      members.listActive(caller.tenantId, { after: Option.map(after, ([grantedAt, userSub]) => ({ grantedAt: DateTime.makeUnsafe(grantedAt), userSub })), limit }),
    keyOf: (last) => [DateTime.toEpochMillis(last.grantedAt), last.userSub] as const
  })
})

/**
 * A tenant keeps at least one active tenant-admin (as GitHub keeps an organisation's last owner):
 * checked on the admin rows locked until the end of the enclosing unit of work, so that two
 * concurrent removals or demotions of the last two admins cannot both pass it.
 */
const keepAnotherAdmin = (tenantId: string, userSub: string) =>
  Effect.gen(function*() {
    const admins = yield* (yield* MemberRepository).lockActiveAdmins(tenantId)
    if (admins.length === 1 && admins[0] === userSub) {
      return yield* new LastTenantAdmin({
        detail: "This member is the tenant's last tenant-admin, and the tenant must keep one tenant-admin: invite another tenant-admin first."
      })
    }
  })

const noSuchMember = () => new NotFound({ detail: "No member with this userSub in the tenant." })

/**
 * Irreversible removal from the tenant, by whoever acts (a tenant-admin, a SCIM token). The row
 * stays so that records keep their userSub; `member.removed` is written in the same unit of work
 * so that the gateway revokes the person's tokens in this tenant. The 404 reads the same whether
 * the userSub is unknown everywhere or known only in another tenant. The tenant's last
 * tenant-admin stays (`keepAnotherAdmin`). With an `origin` (the public API's door),
 * `member_removed` is recorded in the same unit of work.
 */
export const removeMembership = Effect.fn("removeMembership")(function*(tenantId: string, userSub: string, actor: Actor, origin?: RequestOrigin) {
  const members = yield* MemberRepository
  const outbox = yield* ProvisioningOutbox
  yield* (yield* UnitOfWork).run(
    Effect.gen(function*() {
      yield* keepAnotherAdmin(tenantId, userSub)
      const now = yield* DateTime.now
      // Read before the removal, after which no read returns the member: the entry names their e-mail.
      const removed = yield* members.findActiveBySub(tenantId, userSub)
      if (!(yield* members.remove(tenantId, userSub, now))) return yield* noSuchMember()
      yield* outbox.append([MemberRemoved.make({ id: yield* newId, type: "member.removed", occurredAt: now, tenantId, userSub })])
      // Their SCIM User, if any, now reads `active: false`: a new version, whichever door removed them.
      yield* (yield* ScimUserRepository).memberChanged(tenantId, userSub, null, now)
      yield* recordSecurityEvent(origin, {
        tenantId,
        at: now,
        actorSub: actor.subject,
        actorEmail: actor.email,
        action: "member_removed",
        target: userSub,
        detail: Option.match(removed, { onNone: () => ({}), onSome: (member) => ({ email: member.userEmail }) })
      })
    })
  )
})

/** `removeMembership` by a tenant-admin of the caller's tenant. */
export const removeMember = Effect.fn("removeMember")(function*(caller: CallerIdentity, userSub: string, origin?: RequestOrigin) {
  const remover = yield* authorizeTenantAdmin(caller, "write", "DELETE /tenant/invitations/members/{userSub}")
  yield* removeMembership(caller.tenantId, userSub, tenantAdminActor(caller, remover), origin)
})

/**
 * Gives an active member another role at once, keeping the tenant's last tenant-admin
 * (`keepAnotherAdmin`). A PAT keeps the role it was issued with: provisioning reads its own
 * records on every call, so that a demoted tenant-admin's token is refused here at once. With an
 * `origin`, `member_role_changed` is recorded in the same unit of work.
 */
export const changeMemberRole = Effect.fn("changeMemberRole")(function*(tenantId: string, userSub: string, role: ArbRole, actor: Actor, origin?: RequestOrigin) {
  const members = yield* MemberRepository
  yield* (yield* UnitOfWork).run(
    Effect.gen(function*() {
      const member = yield* Effect.flatMap(members.findActiveBySub(tenantId, userSub), Option.match({
        onNone: () => Effect.fail(noSuchMember()),
        onSome: Effect.succeed
      }))
      if (member.arbRole === role) return
      if (member.arbRole === "tenant-admin") yield* keepAnotherAdmin(tenantId, userSub)
      if (!(yield* members.changeRole(tenantId, userSub, role))) return yield* noSuchMember()
      const now = yield* DateTime.now
      yield* (yield* ScimUserRepository).memberChanged(tenantId, userSub, null, now)
      yield* recordSecurityEvent(origin, {
        tenantId,
        at: now,
        actorSub: actor.subject,
        actorEmail: actor.email,
        action: "member_role_changed",
        target: userSub,
        detail: { email: member.userEmail, from: member.arbRole, to: role }
      })
    })
  )
})
