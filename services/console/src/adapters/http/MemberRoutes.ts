import { HttpRouter } from "effect/http"
import { UserSub } from "@portfolio/domain"
import { Effect, Result, Option, Schema } from "effect"
import type { Membership } from "../../ports/DirectoryDesk.js"
import { invite, membersAndInvitations, removeMember, revokeInvitation } from "../../usecases/Members.js"
import type { Member } from "../../usecases/SignIn.js"
import { adminOnly, noticeFrom, postedForm, redirect } from "./Guards.js"
import { membersPage } from "./MemberPages.js"
import { pathId } from "./Routes.js"

const notices = {
  invited: "The invitation is sent.",
  revoked: "The invitation is revoked: its link no longer works.",
  removed: "The member is removed: their tokens stop working within a second."
} as const
const noticeOf = noticeFrom(notices)

const view = (member: Member, membership: Membership, extra: Parameters<typeof membersPage>[3] extends infer V ? Partial<V> : never = {}) =>
  Effect.map(membersAndInvitations(member, membership), (lists) => membersPage(member, membership, member.session.csrfToken, { ...lists, ...extra }))

const UserSubPath = Schema.Struct({ userSub: UserSub })

/** Members and invitations pages of tenant-admins (docs/console.md). */
export const memberRoutes = {
  list: adminOnly((member, membership) => Effect.flatMap(noticeOf, (notice) => view(member, membership, notice))),

  invite: adminOnly((member, membership) =>
    postedForm(member, Schema.Struct({ email: Schema.String, arbRole: Schema.String }), (form) =>
      Result.isFailure(form)
        ? view(member, membership, { error: "Give the invitee's e-mail and role.", status: 400 })
        : invite(member, membership, form.success.email.trim(), form.success.arbRole).pipe(
          Effect.as(redirect("/console/admin/members?notice=invited")),
          Effect.catchTag("Refused", (e) => view(member, membership, { error: e.detail, status: e.status, form: form.success }))
        ))),

  revokeInvitation: adminOnly((member, membership) =>
    postedForm(member, Schema.Struct({}), () =>
      Effect.flatMap(pathId, (id) =>
        Option.isNone(id)
          ? view(member, membership, { error: "There is no such invitation.", status: 404 })
          : revokeInvitation(member, membership, id.value).pipe(
            Effect.as(redirect("/console/admin/members?notice=revoked")),
            Effect.catchTag("Refused", (e) => view(member, membership, { error: e.detail, status: e.status }))
          )))),

  removeMember: adminOnly((member, membership) =>
    postedForm(member, Schema.Struct({}), () =>
      Effect.flatMap(Effect.option(HttpRouter.schemaPathParams(UserSubPath)), (path) =>
        Option.isNone(path)
          ? view(member, membership, { error: "There is no such member.", status: 404 })
          : removeMember(member, membership, path.value.userSub).pipe(
            Effect.as(redirect("/console/admin/members?notice=removed")),
            Effect.catchTag("Refused", (e) => view(member, membership, { error: e.detail, status: e.status }))
          ))))
}
