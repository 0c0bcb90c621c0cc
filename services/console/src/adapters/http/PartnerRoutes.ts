import { HttpRouter, type HttpServerResponse } from "effect/http"
import { PartnerClientId, PartnerName, Scope } from "@portfolio/domain"
import { Effect, Result, Option, Schema } from "effect"
import { ConsoleSettings } from "../../Config.js"
import type { Membership } from "../../ports/DirectoryDesk.js"
import { createPartnerClient, partnerClients, rotatePartnerSecret, setPartnerClientEnabled } from "../../usecases/Partners.js"
import type { Member } from "../../usecases/SignIn.js"
import { NumberFromText } from "./FormMessages.js"
import { adminOnly, noticeFrom, postedForm, redirect } from "./Guards.js"
import { messagePage } from "./Pages.js"
import { partnerSecretPage, partnersPage } from "./PartnerPages.js"

const notices = { enabled: "The client is enabled: it gets tokens again.", disabled: "The client is disabled: it gets no token, and its tokens stop within 5 minutes." } as const
const noticeOf = noticeFrom(notices)

const view = (member: Member, membership: Membership, extra: { readonly notice?: string; readonly error?: string; readonly status?: number; readonly form?: { readonly name: string; readonly scope: string } } = {}) =>
  Effect.map(partnerClients(member, membership), (clients) => partnersPage(member, membership, member.session.csrfToken, { clients, ...extra }))

const tokenUrl = Effect.map(ConsoleSettings, (s) => `${s.publicApiUrl}/oauth/token`)

const unknownPage = (member: Member, membership: Membership) =>
  messagePage(404, "No such partner client", "There is no such partner client in this workspace.", { member, membership, csrf: member.session.csrfToken })

/** A form about one client of the member's tenant: any other id is the same 404. */
const onClient = <E, R>(page: (member: Member, membership: Membership, clientId: string) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  adminOnly((member, membership) =>
    Effect.flatMap(Effect.option(HttpRouter.schemaPathParams(Schema.Struct({ clientId: PartnerClientId }))), (path) =>
      Option.isNone(path)
        ? Effect.succeed(unknownPage(member, membership))
        : page(member, membership, path.value.clientId).pipe(
          Effect.catchIf((e): e is E & { _tag: "NotInTenant" } => (e as { _tag?: string })._tag === "NotInTenant", () => Effect.succeed(unknownPage(member, membership)))
        )))

/** Partner client pages of tenant-admins (docs/console.md). */
export const partnerRoutes = {
  list: adminOnly((member, membership) => Effect.flatMap(noticeOf, (notice) => view(member, membership, notice))),

  create: adminOnly((member, membership) =>
    postedForm(member, Schema.Struct({ name: Schema.String, scope: Schema.String }), (form) =>
      Effect.gen(function*() {
        if (Result.isFailure(form)) return yield* view(member, membership, { error: "Give the client's name and scope.", status: 400 })
        const valid = Schema.decodeUnknownResult(Schema.Struct({ name: PartnerName, scope: Scope }))(form.success)
        if (Result.isFailure(valid)) {
          return yield* view(member, membership, { error: "The name is lowercase letters, digits and '-', 1 to 40 characters; the scope read or write.", status: 400, form: form.success })
        }
        return yield* createPartnerClient(member, membership, valid.success.name, valid.success.scope).pipe(
          Effect.flatMap((created) => Effect.map(tokenUrl, (url) => partnerSecretPage(member, membership, member.session.csrfToken, created, false, url))),
          Effect.catchTag("Refused", (e) => view(member, membership, { error: e.detail, status: e.status, form: form.success }))
        )
      }))),

  rotate: onClient((member, membership, clientId) =>
    postedForm(member, Schema.Struct({ graceHours: NumberFromText.pipe(Schema.check(Schema.isInt(), Schema.isBetween({ minimum: 0, maximum: 168 }))) }), (form) =>
      Result.isFailure(form)
        ? view(member, membership, { error: "The grace period is 0 to 168 hours.", status: 400 })
        : rotatePartnerSecret(member, membership, clientId, form.success.graceHours * 3600).pipe(
          Effect.flatMap((rotated) => Effect.map(tokenUrl, (url) => partnerSecretPage(member, membership, member.session.csrfToken, rotated, true, url))),
          Effect.catchTag("Refused", (e) => view(member, membership, { error: e.detail, status: e.status }))
        ))),

  enable: onClient((member, membership, clientId) =>
    postedForm(member, Schema.Struct({}), () =>
      Effect.as(setPartnerClientEnabled(member, membership, clientId, true), redirect("/console/admin/partners?notice=enabled")).pipe(
        Effect.catchTag("Refused", (e) => view(member, membership, { error: e.detail, status: e.status }))
      ))),

  disable: onClient((member, membership, clientId) =>
    postedForm(member, Schema.Struct({}), () =>
      Effect.as(setPartnerClientEnabled(member, membership, clientId, false), redirect("/console/admin/partners?notice=disabled")).pipe(
        Effect.catchTag("Refused", (e) => view(member, membership, { error: e.detail, status: e.status }))
      )))
}
