import { HttpApiBuilder } from "effect/http-api"
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

export const AdminHandlersLive = HttpApiBuilder.group(WebhookAdminApi, "webhookAdmin", (handlers) =>
  handlers
    .handle("createSubscription", ({ params, payload }) => createSubscription(params.tenantId, payload))
    .handle("listSubscriptions", ({ params }) => listSubscriptions(params.tenantId))
    .handle("getSubscription", ({ params }) => getSubscription(params.id))
    .handle("updateSubscription", ({ params, payload }) => updateSubscription(params.id, payload))
    .handle("deleteSubscription", ({ params }) => deleteSubscription(params.id))
    .handle("enableSubscription", ({ params }) => enableSubscription(params.id))
    .handle("disableSubscription", ({ params }) => disableSubscription(params.id))
    .handle("rotateSecret", ({ params, payload }) => rotateSecret(params.id, payload))
    .handle("listDeliveries", ({ params, query }) => listDeliveries(params.id, query.status, query.limit))
    .handle("recoverDeliveries", ({ params, payload }) => recoverDeliveries(params.id, DateTime.toDate(payload.since)))
    .handle("listAttempts", ({ params }) => listAttempts(params.id))
    .handle("redeliver", ({ params }) => redeliver(params.id)))
