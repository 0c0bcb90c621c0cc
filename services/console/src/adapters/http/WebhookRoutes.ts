import { HttpRouter, type HttpServerResponse } from "effect/http"
import { Uuid, WebhookDescription, WebhookEventKind, WebhookUrl } from "@portfolio/domain"
import { Effect, Result, Option, Schema } from "effect"
import type { Membership } from "../../ports/DirectoryDesk.js"
import type { Member } from "../../usecases/SignIn.js"
import {
  createSubscription,
  deliveryAttempts,
  recoverDeliveries,
  redeliver,
  rotateSubscriptionSecret,
  setSubscriptionEnabled,
  subscriptionDeliveries,
  subscriptions,
  updateSubscription
} from "../../usecases/Webhooks.js"
import { adminOnly, noticeFrom, postedForm, redirect } from "./Guards.js"
import { messagePage } from "./Pages.js"
import { decodeForm, firstMessage, NumberFromText } from "./FormMessages.js"
import { pathId } from "./Routes.js"
import { attemptsPage, newWebhookPage, secretPage, type SubscriptionForm, webhookPage, webhooksPage } from "./WebhookPages.js"

const RawForm = Schema.Struct({
  url: Schema.String,
  description: Schema.String.pipe(Schema.withDecodingDefaultKey(Effect.succeed(""))),
  events: Schema.Union([Schema.String, Schema.Array(Schema.String)]).pipe(Schema.withDecodingDefaultKey(Effect.succeed([] as ReadonlyArray<string>)))
})
const ValidDraft = Schema.Struct({ url: WebhookUrl, description: WebhookDescription, events: Schema.Array(WebhookEventKind) })
const decodeDraft = decodeForm(ValidDraft)

const asForm = (raw: typeof RawForm.Type): SubscriptionForm => ({
  url: raw.url,
  description: raw.description,
  events: typeof raw.events === "string" ? [raw.events] : raw.events
})

const DeliveryPath = Schema.Struct({ id: Uuid, deliveryId: Uuid })
const deliveryPath = Effect.option(HttpRouter.schemaPathParams(DeliveryPath))

const notices = {
  enabled: "The subscription is enabled: new events are delivered to it again.",
  disabled: "The subscription is disabled: nothing is delivered to it until it is enabled.",
  saved: "Saved.",
  redelivered: "The delivery is queued to be attempted again now."
} as const
const noticeOf = noticeFrom(notices)

const unknownPage = (member: Member, membership: Membership) =>
  messagePage(404, "No such subscription", "There is no such webhook subscription in this workspace.", { member, membership, csrf: member.session.csrfToken })

/** A page about one subscription of the member's tenant: any other id is the same 404. */
const onSubscription = <E, R>(page: (member: Member, membership: Membership, id: string) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  adminOnly((member, membership) =>
    Effect.flatMap(pathId, (id) =>
      Option.isNone(id)
        ? Effect.succeed(unknownPage(member, membership))
        : page(member, membership, id.value).pipe(
          Effect.catchIf((e): e is E & { _tag: "NotInTenant" } => (e as { _tag?: string })._tag === "NotInTenant", () => Effect.succeed(unknownPage(member, membership)))
        )))

const detail = (member: Member, membership: Membership, id: string, extra: { readonly notice?: string; readonly error?: string; readonly status?: number; readonly form?: SubscriptionForm } = {}) =>
  Effect.map(subscriptionDeliveries(member, membership, id), (view) => webhookPage(member, membership, member.session.csrfToken, { ...view, ...extra }))

/** Webhook subscription pages of tenant-admins (docs/console.md). */
export const webhookRoutes = {
  list: adminOnly((member, membership) =>
    Effect.map(subscriptions(member, membership), (list) => webhooksPage(member, membership, member.session.csrfToken, list))),

  newForm: adminOnly((member, membership) => Effect.succeed(newWebhookPage(200, member, membership, member.session.csrfToken))),

  create: adminOnly((member, membership) =>
    postedForm(member, RawForm, (raw) =>
      Effect.gen(function*() {
        const csrf = member.session.csrfToken
        if (Result.isFailure(raw)) return newWebhookPage(400, member, membership, csrf, undefined, "Give the receiver's URL.")
        const form = asForm(raw.success)
        const draft = decodeDraft(form)
        if (Result.isFailure(draft)) return newWebhookPage(400, member, membership, csrf, form, firstMessage(draft.failure))
        return yield* createSubscription(member, membership, draft.success).pipe(
          Effect.map((created) => secretPage(member, membership, csrf, created, created.secret, false)),
          Effect.catchTag("Refused", (e) => Effect.succeed(newWebhookPage(e.status, member, membership, csrf, form, e.detail)))
        )
      }))),

  show: onSubscription((member, membership, id) => Effect.flatMap(noticeOf, (notice) => detail(member, membership, id, notice))),

  update: onSubscription((member, membership, id) =>
    postedForm(member, RawForm, (raw) =>
      Effect.gen(function*() {
        if (Result.isFailure(raw)) return yield* detail(member, membership, id, { error: "Give the receiver's URL.", status: 400 })
        const form = asForm(raw.success)
        const draft = decodeDraft(form)
        if (Result.isFailure(draft)) return yield* detail(member, membership, id, { error: firstMessage(draft.failure), status: 400, form })
        return yield* updateSubscription(member, membership, id, draft.success).pipe(
          Effect.as(redirect(`/console/admin/webhooks/${id}?notice=saved`)),
          Effect.catchTag("Refused", (e) => detail(member, membership, id, { error: e.detail, status: e.status, form }))
        )
      }))),

  enable: onSubscription((member, membership, id) =>
    postedForm(member, Schema.Struct({}), () =>
      Effect.as(setSubscriptionEnabled(member, membership, id, true), redirect(`/console/admin/webhooks/${id}?notice=enabled`)).pipe(
        Effect.catchTag("Refused", (e) => detail(member, membership, id, { error: e.detail, status: e.status }))
      ))),

  disable: onSubscription((member, membership, id) =>
    postedForm(member, Schema.Struct({}), () =>
      Effect.as(setSubscriptionEnabled(member, membership, id, false), redirect(`/console/admin/webhooks/${id}?notice=disabled`)).pipe(
        Effect.catchTag("Refused", (e) => detail(member, membership, id, { error: e.detail, status: e.status }))
      ))),

  rotate: onSubscription((member, membership, id) =>
    postedForm(member, Schema.Struct({ graceHours: NumberFromText.pipe(Schema.check(Schema.isInt(), Schema.isBetween({ minimum: 0, maximum: 168 }))) }), (form) =>
      Result.isFailure(form)
        ? detail(member, membership, id, { error: "The grace period is 0 to 168 hours.", status: 400 })
        : rotateSubscriptionSecret(member, membership, id, form.success.graceHours * 3600).pipe(
          Effect.map((rotated) => secretPage(member, membership, member.session.csrfToken, rotated, rotated.secret, true)),
          Effect.catchTag("Refused", (e) => detail(member, membership, id, { error: e.detail, status: e.status }))
        ))),

  recover: onSubscription((member, membership, id) =>
    postedForm(member, Schema.Struct({ since: Schema.String }), (form) => {
      // `datetime-local` sends no zone: the form says UTC.
      const sinceMs = Result.isSuccess(form) ? Date.parse(`${form.success.since}Z`) : Number.NaN
      if (Number.isNaN(sinceMs)) return detail(member, membership, id, { error: "Give the moment to recover from.", status: 400 })
      return recoverDeliveries(member, membership, id, sinceMs).pipe(
        Effect.flatMap((n) => detail(member, membership, id, { notice: `${n} failed ${n === 1 ? "delivery is" : "deliveries are"} queued to be attempted again.` })),
        Effect.catchTag("Refused", (e) => detail(member, membership, id, { error: e.detail, status: e.status }))
      )
    })),

  attempts: onSubscription((member, membership) =>
    Effect.gen(function*() {
      const path = yield* deliveryPath
      if (Option.isNone(path)) return unknownPage(member, membership)
      const view = yield* deliveryAttempts(member, membership, path.value.id, path.value.deliveryId)
      return attemptsPage(member, membership, member.session.csrfToken, view)
    })),

  redeliver: onSubscription((member, membership, id) =>
    postedForm(member, Schema.Struct({}), () =>
      Effect.gen(function*() {
        const path = yield* deliveryPath
        if (Option.isNone(path)) return unknownPage(member, membership)
        return yield* redeliver(member, membership, id, path.value.deliveryId).pipe(
          Effect.as(redirect(`/console/admin/webhooks/${id}?notice=redelivered`)),
          Effect.catchTag("Refused", (e) => detail(member, membership, id, { error: e.detail, status: e.status }))
        )
      })))
}
