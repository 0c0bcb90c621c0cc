import type { SubscriptionDisabled } from "@portfolio/domain"
import { UnitOfWork } from "@portfolio/platform/sql"
import { Effect, Option } from "effect"
import { subscriptionDisabledMail } from "../domain/SubscriptionDisabledMail.js"
import { Mailer } from "../ports/Mailer.js"
import { MemberRepository } from "../ports/MemberRepository.js"
import { NotificationLog } from "../ports/NotificationLog.js"
import { TenantRepository } from "../ports/TenantRepository.js"

/**
 * Mails every active tenant-admin of the event's tenant that the dispatcher disabled one of its
 * webhook subscriptions; answers how many were mailed now. Each recipient is claimed in the
 * notification log and mailed in one unit of work, so a redelivered event mails nobody twice, and
 * a mail that could not be handed over (`Unavailable`) undoes only its own claim: the retry mails
 * those left. A tenant unknown here (another deployment's, on a shared NATS) has nobody to mail.
 */
export const notifySubscriptionDisabled = Effect.fn("notifySubscriptionDisabled")(function*(event: SubscriptionDisabled) {
  yield* Effect.annotateCurrentSpan({ "event.id": event.id, "tenant.id": event.tenantId, "webhook.subscription.id": event.subscriptionId })
  const tenant = yield* Effect.flatMap(TenantRepository, (tenants) => tenants.findById(event.tenantId))
  if (Option.isNone(tenant)) {
    yield* Effect.logInfo("subscription.disabled of a tenant unknown here; nobody to mail", { tenantId: event.tenantId, eventId: event.id })
    return 0
  }
  const members = yield* MemberRepository
  const log = yield* NotificationLog
  const mailer = yield* Mailer
  const unitOfWork = yield* UnitOfWork
  const admins = (yield* members.listActive(event.tenantId)).filter((member) => member.arbRole === "tenant-admin")
  let mailed = 0
  for (const admin of admins) {
    const sent = yield* unitOfWork.run(
      Effect.gen(function*() {
        if (!(yield* log.claim(event.id, admin.userEmail))) return false
        yield* mailer.send(subscriptionDisabledMail({
          to: admin.userEmail,
          tenantSlug: tenant.value.slug,
          subscriptionId: event.subscriptionId,
          url: event.url,
          consecutiveFailures: event.consecutiveFailures,
          lastError: event.lastError,
          disabledAt: event.occurredAt
        }))
        return true
      })
    )
    if (sent) mailed++
  }
  yield* Effect.logInfo("tenant-admins told of a disabled webhook subscription", {
    eventId: event.id,
    subscriptionId: event.subscriptionId,
    admins: admins.length,
    mailedNow: mailed
  })
  return mailed
})
