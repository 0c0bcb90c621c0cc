import { Effect, Option } from "effect"
import type { Membership } from "../ports/DirectoryDesk.js"
import { type SubscriptionDraft, WebhookDesk } from "../ports/WebhookDesk.js"
import { NotInTenant } from "./Ownership.js"
import { actorOf, type Member, recordSecurityEvent } from "./SignIn.js"

/**
 * The webhook pages' use cases (docs/product-rules.md#webhooks): the dispatcher holds
 * subscriptions and applies their rules. It reaches a subscription by id whatever its tenant, so
 * every use case on one first checks that it is the member's tenant's: another tenant's
 * subscription is answered as an unknown one.
 */
/** How far back the delivery page looks for a delivery of the subscription. */
const DeliveriesSearched = 1000

const logAs = (member: Member, membership: Membership, action: Parameters<typeof recordSecurityEvent>[0]["action"], target: string, detail: Readonly<Record<string, string | number | null>> = {}) =>
  recordSecurityEvent({ tenantIds: [membership.tenantId], actorSub: member.account.subject, actorEmail: member.account.email, action, target, detail })

export const subscriptions = (member: Member, membership: Membership) => Effect.flatMap(WebhookDesk, (desk) => desk.list(actorOf(member, membership)))

/** The subscription if it is the member's tenant's. */
export const subscription = (member: Member, membership: Membership, id: string) =>
  Effect.gen(function*() {
    const found = yield* (yield* WebhookDesk).get(actorOf(member, membership), id)
    if (Option.isNone(found) || found.value.tenantId !== membership.tenantId) return yield* new NotInTenant()
    return found.value
  })

export const createSubscription = (member: Member, membership: Membership, draft: SubscriptionDraft) =>
  Effect.gen(function*() {
    const created = yield* (yield* WebhookDesk).create(actorOf(member, membership), draft)
    yield* logAs(member, membership, "webhook_created", created.id, { url: created.url })
    return created
  })

export const updateSubscription = (member: Member, membership: Membership, id: string, draft: SubscriptionDraft) =>
  Effect.gen(function*() {
    yield* subscription(member, membership, id)
    const updated = yield* (yield* WebhookDesk).update(actorOf(member, membership), id, draft)
    yield* logAs(member, membership, "webhook_updated", id, { url: updated.url })
    return updated
  })

export const setSubscriptionEnabled = (member: Member, membership: Membership, id: string, enabled: boolean) =>
  Effect.gen(function*() {
    yield* subscription(member, membership, id)
    const changed = yield* (yield* WebhookDesk).setEnabled(actorOf(member, membership), id, enabled)
    yield* logAs(member, membership, enabled ? "webhook_enabled" : "webhook_disabled", id)
    return changed
  })

export const rotateSubscriptionSecret = (member: Member, membership: Membership, id: string, graceSeconds: number) =>
  Effect.gen(function*() {
    yield* subscription(member, membership, id)
    const rotated = yield* (yield* WebhookDesk).rotateSecret(actorOf(member, membership), id, graceSeconds)
    yield* logAs(member, membership, "webhook_secret_rotated", id, { graceSeconds })
    return rotated
  })

export const subscriptionDeliveries = (member: Member, membership: Membership, id: string) =>
  Effect.gen(function*() {
    const found = yield* subscription(member, membership, id)
    const deliveries = yield* (yield* WebhookDesk).deliveries(actorOf(member, membership), id, 50)
    return { subscription: found, deliveries }
  })

/** A delivery of the member's tenant's subscription, among its latest ones. */
const delivery = (member: Member, membership: Membership, id: string, deliveryId: string) =>
  Effect.gen(function*() {
    const found = yield* subscription(member, membership, id)
    const deliveries = yield* (yield* WebhookDesk).deliveries(actorOf(member, membership), id, DeliveriesSearched)
    const one = deliveries.find((d) => d.id === deliveryId)
    if (one === undefined) return yield* new NotInTenant()
    return { subscription: found, delivery: one }
  })

export const deliveryAttempts = (member: Member, membership: Membership, id: string, deliveryId: string) =>
  Effect.gen(function*() {
    const found = yield* delivery(member, membership, id, deliveryId)
    const attempts = yield* (yield* WebhookDesk).attempts(actorOf(member, membership), deliveryId)
    return { ...found, attempts }
  })

export const redeliver = (member: Member, membership: Membership, id: string, deliveryId: string) =>
  Effect.gen(function*() {
    yield* delivery(member, membership, id, deliveryId)
    const again = yield* (yield* WebhookDesk).redeliver(actorOf(member, membership), deliveryId)
    yield* logAs(member, membership, "webhook_redelivered", deliveryId, { subscription: id })
    return again
  })

export const recoverDeliveries = (member: Member, membership: Membership, id: string, sinceMs: number) =>
  Effect.gen(function*() {
    yield* subscription(member, membership, id)
    const redelivered = yield* (yield* WebhookDesk).recover(actorOf(member, membership), id, sinceMs)
    yield* logAs(member, membership, "webhook_recovered", id, { since: new Date(sinceMs).toISOString(), redelivered })
    return redelivered
  })
