import { type CreateSubscriptionRequest, InvalidRequest, NotFound, type RotateSecretRequest, type UpdateSubscriptionRequest } from "@portfolio/domain"
import { newId } from "@portfolio/platform/ids"
import { Effect, Option } from "effect"
import { randomBytes } from "node:crypto"
import { newSigningSecret, SigningSecretBytes } from "../domain/Signature.js"
import { targetUrlProblem } from "../domain/TargetPolicy.js"
import { DispatcherSettings } from "../Config.js"
import type { SubscriptionRecord } from "../domain/Subscription.js"
import { SubscriptionRepository } from "../ports/SubscriptionRepository.js"
import { subscriptionView, subscriptionWithSecret } from "./Views.js"

/** Subscriptions as operators (and later the console) manage them (docs/product-rules.md#webhooks). */

export const subscriptionNotFound = (id: string) => new NotFound({ detail: `Webhook subscription '${id}' does not exist.` })

const found = <A>(id: string) => (record: Option.Option<A>) =>
  Option.match(record, { onNone: () => Effect.fail(subscriptionNotFound(id)), onSome: Effect.succeed })

/** Refused here, before anything is stored: a URL no attempt could ever be allowed to reach. */
const checkedUrl = Effect.fn("checkedUrl")(function*(url: string) {
  const { allowPrivateTargets } = yield* DispatcherSettings
  const problem = targetUrlProblem(url, { allowPrivateTargets })
  if (problem !== undefined) return yield* new InvalidRequest({ detail: `The webhook URL is not accepted: ${problem}.` })
  return url
})

export const createSubscription = Effect.fn("createSubscription")(function*(tenantId: string, request: CreateSubscriptionRequest) {
  const url = yield* checkedUrl(request.url)
  const now = new Date()
  const record = {
    id: yield* newId,
    tenantId,
    url,
    description: request.description,
    kinds: request.events === undefined ? null : [...new Set(request.events)],
    state: "enabled" as const,
    disabledReason: null,
    consecutiveFailures: 0,
    secret: newSigningSecret(randomBytes(SigningSecretBytes)),
    previousSecret: null,
    previousSecretExpiresAt: null,
    createdAt: now,
    updatedAt: now
  }
  yield* (yield* SubscriptionRepository).insert(record)
  return subscriptionWithSecret(record)
})

export const listSubscriptions = Effect.fn("listSubscriptions")(function*(tenantId: string) {
  return (yield* (yield* SubscriptionRepository).listByTenant(tenantId)).map(subscriptionView)
})

export const getSubscription = Effect.fn("getSubscription")(function*(id: string) {
  return subscriptionView(yield* (yield* SubscriptionRepository).find(id).pipe(Effect.flatMap(found(id))))
})

export const updateSubscription = Effect.fn("updateSubscription")(function*(id: string, request: UpdateSubscriptionRequest) {
  const url = request.url === undefined ? undefined : yield* checkedUrl(request.url)
  const updated = yield* (yield* SubscriptionRepository).update(id, {
    ...(url === undefined ? {} : { url }),
    ...(request.events === undefined ? {} : { kinds: [...new Set(request.events)] }),
    ...(request.description === undefined ? {} : { description: request.description })
  })
  return subscriptionView(yield* found<SubscriptionRecord>(id)(updated))
})

/** Deleting a subscription deletes its deliveries and their attempts with it. */
export const deleteSubscription = Effect.fn("deleteSubscription")(function*(id: string) {
  if (!(yield* (yield* SubscriptionRepository).remove(id))) return yield* subscriptionNotFound(id)
})

export const enableSubscription = Effect.fn("enableSubscription")(function*(id: string) {
  return subscriptionView(yield* (yield* SubscriptionRepository).setState(id, "enabled", null).pipe(Effect.flatMap(found(id))))
})

export const disableSubscription = Effect.fn("disableSubscription")(function*(id: string) {
  return subscriptionView(yield* (yield* SubscriptionRepository).setState(id, "disabled", "manual").pipe(Effect.flatMap(found(id))))
})

/** A new secret, answered once; the old one keeps signing beside it for `graceSeconds`. */
export const rotateSecret = Effect.fn("rotateSecret")(function*(id: string, request: RotateSecretRequest) {
  const expiresAt = request.graceSeconds === 0 ? null : new Date(Date.now() + request.graceSeconds * 1000)
  const rotated = yield* (yield* SubscriptionRepository).rotateSecret(id, newSigningSecret(randomBytes(SigningSecretBytes)), expiresAt)
  return subscriptionWithSecret(yield* found<SubscriptionRecord>(id)(rotated))
})
