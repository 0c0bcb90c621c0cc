import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { asProblem, Conflict, InvalidRequest, NotFound } from "../Errors.js"
import { OperatorAuthentication } from "../Security.js"
import {
  CreateSubscriptionRequest,
  DeliveriesQuery,
  DeliveryAttempt,
  DeliveryId,
  RecoverRequest,
  RecoverResult,
  RotateSecretRequest,
  SubscriptionId,
  UpdateSubscriptionRequest,
  WebhookDelivery,
  WebhookSubscription,
  WebhookSubscriptionWithSecret
} from "../Webhooks.js"

const SubscriptionPath = Schema.Struct({ id: SubscriptionId })
const DeliveryPath = Schema.Struct({ id: DeliveryId })

/**
 * The webhook-dispatcher's admin API, on its only port; the gateway never routes it. A
 * subscription belongs to a tenant (by id: the CLI resolves the slug through provisioning) and is
 * reached by its own id afterwards.
 */
export class WebhookAdminGroup extends HttpApiGroup.make("webhookAdmin")
  .add(
    HttpApiEndpoint.post("createSubscription", "/admin/tenants/:tenantId/webhooks")
      .setPath(Schema.Struct({ tenantId: Schema.UUID }))
      .setPayload(CreateSubscriptionRequest)
      .addSuccess(WebhookSubscriptionWithSecret, { status: 201 })
  )
  .add(
    HttpApiEndpoint.get("listSubscriptions", "/admin/tenants/:tenantId/webhooks")
      .setPath(Schema.Struct({ tenantId: Schema.UUID }))
      .addSuccess(Schema.Array(WebhookSubscription))
  )
  .add(
    HttpApiEndpoint.get("getSubscription", "/admin/webhooks/:id")
      .setPath(SubscriptionPath)
      .addSuccess(WebhookSubscription)
      .addError(asProblem(NotFound))
  )
  .add(
    HttpApiEndpoint.patch("updateSubscription", "/admin/webhooks/:id")
      .setPath(SubscriptionPath)
      .setPayload(UpdateSubscriptionRequest)
      .addSuccess(WebhookSubscription)
      .addError(asProblem(NotFound))
  )
  .add(
    HttpApiEndpoint.del("deleteSubscription", "/admin/webhooks/:id")
      .setPath(SubscriptionPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(asProblem(NotFound))
  )
  .add(
    HttpApiEndpoint.post("enableSubscription", "/admin/webhooks/:id/enable")
      .setPath(SubscriptionPath)
      .addSuccess(WebhookSubscription)
      .addError(asProblem(NotFound))
  )
  .add(
    HttpApiEndpoint.post("disableSubscription", "/admin/webhooks/:id/disable")
      .setPath(SubscriptionPath)
      .addSuccess(WebhookSubscription)
      .addError(asProblem(NotFound))
  )
  .add(
    HttpApiEndpoint.post("rotateSecret", "/admin/webhooks/:id/rotate-secret")
      .setPath(SubscriptionPath)
      .setPayload(RotateSecretRequest)
      .addSuccess(WebhookSubscriptionWithSecret)
      .addError(asProblem(NotFound))
  )
  .add(
    HttpApiEndpoint.get("listDeliveries", "/admin/webhooks/:id/deliveries")
      .setPath(SubscriptionPath)
      .setUrlParams(DeliveriesQuery)
      .addSuccess(Schema.Array(WebhookDelivery))
      .addError(asProblem(NotFound))
  )
  .add(
    HttpApiEndpoint.post("recoverDeliveries", "/admin/webhooks/:id/recover")
      .setPath(SubscriptionPath)
      .setPayload(RecoverRequest)
      .addSuccess(RecoverResult)
      .addError(asProblem(NotFound))
      .addError(asProblem(Conflict))
  )
  .add(
    HttpApiEndpoint.get("listAttempts", "/admin/deliveries/:id/attempts")
      .setPath(DeliveryPath)
      .addSuccess(Schema.Array(DeliveryAttempt))
      .addError(asProblem(NotFound))
  )
  .add(
    HttpApiEndpoint.post("redeliver", "/admin/deliveries/:id/redeliver")
      .setPath(DeliveryPath)
      .addSuccess(WebhookDelivery, { status: 202 })
      .addError(asProblem(NotFound))
      .addError(asProblem(Conflict))
  )
  .middleware(OperatorAuthentication) {}

export class WebhookAdminApi extends HttpApi.make("webhookAdmin")
  .add(WebhookAdminGroup)
  .addError(asProblem(InvalidRequest)) {}
