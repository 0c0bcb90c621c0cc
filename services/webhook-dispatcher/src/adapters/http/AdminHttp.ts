import { HttpApiBuilder } from "@effect/platform"
import { WebhookAdminApi } from "@portfolio/domain"
import { DateTime } from "effect"
import { listAttempts, listDeliveries, recoverDeliveries, redeliver } from "../../usecases/Deliveries.js"
import {
  createSubscription,
  deleteSubscription,
  disableSubscription,
  enableSubscription,
  getSubscription,
  listSubscriptions,
  rotateSecret,
  updateSubscription
} from "../../usecases/Subscriptions.js"

export const WebhookAdminHttpLive = HttpApiBuilder.group(WebhookAdminApi, "webhookAdmin", (handlers) =>
  handlers
    .handle("createSubscription", ({ path, payload }) => createSubscription(path.tenantId, payload))
    .handle("listSubscriptions", ({ path }) => listSubscriptions(path.tenantId))
    .handle("getSubscription", ({ path }) => getSubscription(path.id))
    .handle("updateSubscription", ({ path, payload }) => updateSubscription(path.id, payload))
    .handle("deleteSubscription", ({ path }) => deleteSubscription(path.id))
    .handle("enableSubscription", ({ path }) => enableSubscription(path.id))
    .handle("disableSubscription", ({ path }) => disableSubscription(path.id))
    .handle("rotateSecret", ({ path, payload }) => rotateSecret(path.id, payload))
    .handle("listDeliveries", ({ path, urlParams }) => listDeliveries(path.id, urlParams.status, urlParams.limit))
    .handle("recoverDeliveries", ({ path, payload }) => recoverDeliveries(path.id, DateTime.toDate(payload.since)))
    .handle("listAttempts", ({ path }) => listAttempts(path.id))
    .handle("redeliver", ({ path }) => redeliver(path.id)))
