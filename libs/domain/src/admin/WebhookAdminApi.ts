import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { Schema } from "effect"
import { asProblem, Conflict, NotFound } from "../Errors.js"
import { OperatorAuthentication, Problems } from "../Security.js"
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
import { Uuid } from "../Wire.js"

const SubscriptionPath = Schema.Struct({ id: SubscriptionId })
const DeliveryPath = Schema.Struct({ id: DeliveryId })

/**
 * The webhook-dispatcher's admin API, on its only port; the gateway never routes it. A
 * subscription belongs to a tenant (by id: the CLI resolves the slug through provisioning) and is
 * reached by its own id afterwards.
 */
export class WebhookAdminGroup extends HttpApiGroup.make("webhookAdmin")
  .add(
    HttpApiEndpoint.post("createSubscription", "/admin/tenants/:tenantId/webhooks", {
      params: Schema.Struct({ tenantId: Uuid }),
      payload: CreateSubscriptionRequest,
      success: WebhookSubscriptionWithSecret.pipe(HttpApiSchema.status(201))
    })
  )
  .add(
    HttpApiEndpoint.get("listSubscriptions", "/admin/tenants/:tenantId/webhooks", {
      params: Schema.Struct({ tenantId: Uuid }),
      success: Schema.Array(WebhookSubscription)
    })
  )
  .add(
    HttpApiEndpoint.get("getSubscription", "/admin/webhooks/:id", {
      params: SubscriptionPath,
      success: WebhookSubscription,
      error: asProblem(NotFound)
    })
  )
  .add(
    HttpApiEndpoint.patch("updateSubscription", "/admin/webhooks/:id", {
      params: SubscriptionPath,
      payload: UpdateSubscriptionRequest,
      success: WebhookSubscription,
      error: asProblem(NotFound)
    })
  )
  .add(
    HttpApiEndpoint.delete("deleteSubscription", "/admin/webhooks/:id", {
      params: SubscriptionPath,
      success: HttpApiSchema.NoContent,
      error: asProblem(NotFound)
    })
  )
  .add(
    HttpApiEndpoint.post("enableSubscription", "/admin/webhooks/:id/enable", {
      params: SubscriptionPath,
      success: WebhookSubscription,
      error: asProblem(NotFound)
    })
  )
  .add(
    HttpApiEndpoint.post("disableSubscription", "/admin/webhooks/:id/disable", {
      params: SubscriptionPath,
      success: WebhookSubscription,
      error: asProblem(NotFound)
    })
  )
  .add(
    HttpApiEndpoint.post("rotateSecret", "/admin/webhooks/:id/rotate-secret", {
      params: SubscriptionPath,
      payload: RotateSecretRequest,
      success: WebhookSubscriptionWithSecret,
      error: asProblem(NotFound)
    })
  )
  .add(
    HttpApiEndpoint.get("listDeliveries", "/admin/webhooks/:id/deliveries", {
      params: SubscriptionPath,
      query: DeliveriesQuery,
      success: Schema.Array(WebhookDelivery),
      error: asProblem(NotFound)
    })
  )
  .add(
    HttpApiEndpoint.post("recoverDeliveries", "/admin/webhooks/:id/recover", {
      params: SubscriptionPath,
      payload: RecoverRequest,
      success: RecoverResult,
      error: [asProblem(NotFound), asProblem(Conflict)]
    })
  )
  .add(
    HttpApiEndpoint.get("listAttempts", "/admin/deliveries/:id/attempts", {
      params: DeliveryPath,
      success: Schema.Array(DeliveryAttempt),
      error: asProblem(NotFound)
    })
  )
  .add(
    HttpApiEndpoint.post("redeliver", "/admin/deliveries/:id/redeliver", {
      params: DeliveryPath,
      success: WebhookDelivery.pipe(HttpApiSchema.status(202)),
      error: [asProblem(NotFound), asProblem(Conflict)]
    })
  )
  .middleware(OperatorAuthentication) {}

export class WebhookAdminApi extends HttpApi.make("webhookAdmin")
  .add(WebhookAdminGroup)
  .middleware(Problems) {}
