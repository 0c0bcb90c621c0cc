import { ScimPath, ScimTokenLabel, ScimTokensPerTenantMax } from "@portfolio/domain"
import { Effect, Result, Option, Schema } from "effect"
import { ConsoleSettings } from "../../Config.js"
import type { Membership } from "../../ports/DirectoryDesk.js"
import type { Refused } from "../../ports/TokenDesk.js"
import { createScimToken, revokeScimToken, scimTokens } from "../../usecases/ScimTokens.js"
import type { Member } from "../../usecases/SignIn.js"
import { adminOnly, noticeFrom, postedForm, redirect } from "./Guards.js"
import { messagePage } from "./Pages.js"
import { pathId } from "./Routes.js"
import { scimPage, scimTokenPage, type ScimView } from "./ScimPages.js"

const noticeOf = noticeFrom({ revoked: "The token is revoked: the identity tool holding it is refused within a second." })

/** What identity tools are given: the public API's base URL, which the console is configured with. */
const scimBaseUrl = Effect.map(ConsoleSettings, (s) => `${s.publicApiUrl}${ScimPath}`)

type Notes = Omit<ScimView, "tokens" | "scimBaseUrl">

const view = (member: Member, membership: Membership, notes: Notes = {}) =>
  Effect.gen(function*() {
    const tokens = yield* scimTokens(member, membership)
    return scimPage(member, membership, member.session.csrfToken, { tokens, scimBaseUrl: yield* scimBaseUrl, ...notes })
  })

/** A typed label, trimmed as a person means it, then held to the contract's rule. */
const Label = Schema.Trim.pipe(Schema.decodeTo(ScimTokenLabel))

/** The one refusal a tenant-admin meets in the ordinary course of a rotation, told with what to do about it. */
const refusalText = (refused: Refused) =>
  refused.status === 409
    ? `This workspace has ${ScimTokensPerTenantMax} active SCIM tokens, the most it may hold: revoke the one the identity tool no longer uses, then make the new one.`
    : refused.detail

const unknownPage = (member: Member, membership: Membership) =>
  messagePage(404, "No such SCIM token", "There is no such SCIM token in this workspace.", { member, membership, csrf: member.session.csrfToken })

/** SCIM provisioning pages of tenant-admins (docs/console.md). */
export const scimRoutes = {
  list: adminOnly((member, membership) => Effect.flatMap(noticeOf, (notice) => view(member, membership, notice))),

  create: adminOnly((member, membership) =>
    postedForm(member, Schema.Struct({ label: Schema.String }), (form) =>
      Effect.gen(function*() {
        if (Result.isFailure(form)) return yield* view(member, membership, { error: "Give the token a label.", status: 400 })
        const label = Schema.decodeUnknownResult(Label)(form.success.label)
        if (Result.isFailure(label)) {
          return yield* view(member, membership, { error: "The label is 1 to 80 characters on one line, such as the identity tool's name.", status: 400, form: form.success })
        }
        return yield* createScimToken(member, membership, label.success).pipe(
          Effect.flatMap((created) => Effect.map(scimBaseUrl, (url) => scimTokenPage(member, membership, member.session.csrfToken, created, url))),
          Effect.catchTag("Refused", (e) => view(member, membership, { error: refusalText(e), status: e.status, form: form.success }))
        )
      }))),

  revoke: adminOnly((member, membership) =>
    Effect.flatMap(pathId, (id) =>
      Option.isNone(id)
        ? Effect.succeed(unknownPage(member, membership))
        : postedForm(member, Schema.Struct({}), () =>
          Effect.as(revokeScimToken(member, membership, id.value), redirect("/console/admin/scim?notice=revoked")).pipe(
            Effect.catchTags({
              NotInTenant: () => Effect.succeed(unknownPage(member, membership)),
              Refused: (e) => view(member, membership, { error: refusalText(e), status: e.status })
            })
          ))))
}
