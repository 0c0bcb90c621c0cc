import { HttpApiBuilder } from "effect/http-api"
import {
  Caller,
  Conflict,
  DeliveryAttempt,
  NotFound,
  RecoverResult,
  WebhookAdminApi,
  WebhookDelivery,
  WebhookEventKinds,
  WebhookSubscription,
  WebhookSubscriptionWithSecret
} from "@portfolio/domain"
import { InternalSecret, OperatorAuthenticationLive } from "@portfolio/platform/security"
import { Context, DateTime, Effect, Layer } from "effect"
import { FakeSecret, FixedTime, serve } from "./FakeAdminApis.js"

/**
 * An in-memory stand-in for the webhook-dispatcher's admin API, served over real HTTP behind the
 * platform's operator authentication like the other fakes. It keeps what the CLI sent, so tests
 * check the calls as well as what the CLI printed; its rules are the service's as far as the CLI
 * can tell them apart (404 for an unknown id, 409 on a disabled subscription).
 */

/** The id of the n-th subscription created (from 1). */
export const subscriptionId = (n: number) => `55555555-0000-4000-8000-${String(n).padStart(12, "0")}`
/** The secret given at the n-th creation or rotation (from 1). */
export const webhookSecret = (n: number) => `whsec_fake-secret-${n}`

export interface FakeWebhookState {
  readonly subscriptions: Map<string, WebhookSubscription>
  readonly deliveries: Map<string, WebhookDelivery>
  readonly attempts: Map<string, ReadonlyArray<DeliveryAttempt>>
  /** `METHOD /path body-or-query` of every call, in order. */
  readonly calls: Array<string>
  readonly callers: Array<string>
  secrets: number
}

export class FakeWebhookAdmin extends Context.Service<FakeWebhookAdmin, {
  readonly state: FakeWebhookState
  readonly url: string
}>()("test/FakeWebhookAdmin") {}

const notFound = (id: string) => new NotFound({ detail: `Webhook subscription '${id}' does not exist.` })

const handlers = (state: FakeWebhookState) => {
  const record = (call: string) =>
    Effect.flatMap(Caller, (caller) =>
      Effect.sync(() => {
        state.calls.push(call)
        state.callers.push(`${caller.subject}/${caller.role}/${caller.scope}`)
      }))
  const find = (id: string) => {
    const found = state.subscriptions.get(id)
    return found === undefined ? Effect.fail(notFound(id)) : Effect.succeed(found)
  }
  const save = (subscription: WebhookSubscription) => {
    state.subscriptions.set(subscription.id, subscription)
    return subscription
  }
  const withNewSecret = (subscription: WebhookSubscription) =>
    new WebhookSubscriptionWithSecret({ ...subscription, secret: webhookSecret(++state.secrets) })
  const enabled = (id: string) =>
    Effect.flatMap(find(id), (s) =>
      s.state === "enabled" ? Effect.succeed(s) : Effect.fail(new Conflict({ detail: `Subscription '${id}' is disabled: enable it first.` })))
  const delivery = (id: string) => {
    const found = state.deliveries.get(id)
    return found === undefined ? Effect.fail(new NotFound({ detail: `Webhook delivery '${id}' does not exist.` })) : Effect.succeed(found)
  }

  return HttpApiBuilder.group(WebhookAdminApi, "webhookAdmin", (h) =>
    h
      .handle("createSubscription", ({ params, payload }) =>
        Effect.as(record(`POST /admin/tenants/${params.tenantId}/webhooks ${JSON.stringify(payload)}`), withNewSecret(save(new WebhookSubscription({
          id: subscriptionId(state.subscriptions.size + 1),
          tenantId: params.tenantId,
          url: payload.url,
          description: payload.description,
          events: payload.events ?? WebhookEventKinds,
          allEvents: payload.events === undefined,
          state: "enabled",
          disabledReason: null,
          consecutiveFailures: 0,
          previousSecretExpiresAt: null,
          createdAt: FixedTime,
          updatedAt: FixedTime
        })))))
      .handle("listSubscriptions", ({ params }) =>
        Effect.as(
          record(`GET /admin/tenants/${params.tenantId}/webhooks`),
          [...state.subscriptions.values()].filter((s) => s.tenantId === params.tenantId)
        ))
      .handle("getSubscription", ({ params }) => Effect.andThen(record(`GET /admin/webhooks/${params.id}`), find(params.id)))
      .handle("updateSubscription", ({ params, payload }) =>
        Effect.andThen(
          record(`PATCH /admin/webhooks/${params.id} ${JSON.stringify(payload)}`),
          Effect.map(find(params.id), (s) =>
            save(new WebhookSubscription({
              ...s,
              ...(payload.url === undefined ? {} : { url: payload.url }),
              ...(payload.events === undefined ? {} : { events: payload.events, allEvents: false }),
              ...(payload.description === undefined ? {} : { description: payload.description })
            })))
        ))
      .handle("deleteSubscription", ({ params }) =>
        Effect.andThen(
          record(`DELETE /admin/webhooks/${params.id}`),
          Effect.map(find(params.id), (s) => void state.subscriptions.delete(s.id))
        ))
      .handle("enableSubscription", ({ params }) =>
        Effect.andThen(
          record(`POST /admin/webhooks/${params.id}/enable`),
          Effect.map(find(params.id), (s) => save(new WebhookSubscription({ ...s, state: "enabled", disabledReason: null, consecutiveFailures: 0 })))
        ))
      .handle("disableSubscription", ({ params }) =>
        Effect.andThen(
          record(`POST /admin/webhooks/${params.id}/disable`),
          Effect.map(find(params.id), (s) => save(new WebhookSubscription({ ...s, state: "disabled", disabledReason: "manual" })))
        ))
      .handle("rotateSecret", ({ params, payload }) =>
        Effect.andThen(
          record(`POST /admin/webhooks/${params.id}/rotate-secret ${JSON.stringify(payload)}`),
          Effect.map(find(params.id), (s) =>
            withNewSecret(save(new WebhookSubscription({
              ...s,
              previousSecretExpiresAt: payload.graceSeconds === 0 ? null : DateTime.add(FixedTime, { seconds: payload.graceSeconds })
            }))))
        ))
      .handle("listDeliveries", ({ params, query }) =>
        Effect.andThen(
          record(`GET /admin/webhooks/${params.id}/deliveries ${JSON.stringify(query)}`),
          Effect.map(find(params.id), (s) =>
            [...state.deliveries.values()]
              .filter((d) => d.subscriptionId === s.id && (query.status === undefined || d.status === query.status))
              .slice(0, query.limit))
        ))
      .handle("listAttempts", ({ params }) =>
        Effect.andThen(
          record(`GET /admin/deliveries/${params.id}/attempts`),
          Effect.map(delivery(params.id), (d) => state.attempts.get(d.id) ?? [])
        ))
      .handle("redeliver", ({ params }) =>
        Effect.gen(function*() {
          yield* record(`POST /admin/deliveries/${params.id}/redeliver`)
          const d = yield* delivery(params.id)
          yield* enabled(d.subscriptionId)
          const queued = new WebhookDelivery({ ...d, status: "pending", failureReason: null, nextAttemptAt: FixedTime })
          state.deliveries.set(d.id, queued)
          return queued
        }))
      .handle("recoverDeliveries", ({ params, payload }) =>
        Effect.gen(function*() {
          yield* record(`POST /admin/webhooks/${params.id}/recover ${JSON.stringify({ since: DateTime.formatIso(payload.since) })}`)
          yield* enabled(params.id)
          const failed = [...state.deliveries.values()].filter((d) =>
            d.subscriptionId === params.id && d.status === "failed" && DateTime.isGreaterThanOrEqualTo(d.createdAt, payload.since)
          )
          for (const d of failed) state.deliveries.set(d.id, new WebhookDelivery({ ...d, status: "pending", failureReason: null }))
          return new RecoverResult({ redelivered: failed.length })
        }))
  )
}

export const FakeWebhookAdminLive = Layer.effect(
  FakeWebhookAdmin,
  Effect.gen(function*() {
    const state: FakeWebhookState = { subscriptions: new Map(), deliveries: new Map(), attempts: new Map(), calls: [], callers: [], secrets: 0 }
    const auth = OperatorAuthenticationLive.pipe(Layer.provide(InternalSecret.fixed(FakeSecret)))
    const url = yield* serve(HttpApiBuilder.layer(WebhookAdminApi).pipe(Layer.provide(handlers(state).pipe(Layer.provide(auth)))))
    return { state, url }
  })
)
