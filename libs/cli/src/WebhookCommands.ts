import { Argument, Command, Flag } from "effect/cli"
import { DeliveryId, DeliveryStatus, SubscriptionId, WebhookDescription, WebhookEventKinds, WebhookUrl } from "@portfolio/domain"
import { Effect, Option, Schema } from "effect"
import { print } from "./Output.js"
import { choice, json, parsed, tenantOption } from "./SharedOptions.js"
import { parseEventKinds, parseGraceDuration, parseSince } from "./WebhookInput.js"
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listDeliveryAttempts,
  listWebhookDeliveries,
  listWebhooks,
  recoverWebhookDeliveries,
  redeliver,
  rotateWebhookSecret,
  setWebhookEnabled,
  updateWebhook
} from "./WebhookOperations.js"
import {
  attemptsListed,
  deliveriesListed,
  recovered,
  redelivered,
  webhookCreated,
  webhookDeleted,
  webhookSecretRotated,
  webhooksListed,
  webhookShown
} from "./WebhookOutput.js"

const subscriptionId = Argument.String("id").pipe(Argument.withSchema(SubscriptionId), Argument.withDescription("Id of the webhook subscription."))
const deliveryId = Argument.String("delivery-id").pipe(Argument.withSchema(DeliveryId), Argument.withDescription("Id of the delivery."))

const urlOption = Flag.String("url").pipe(Flag.withMetavar("url"), Flag.withSchema(WebhookUrl), Flag.withDescription("Where the events are POSTed (https)."))
const eventsOption = Flag.String("events").pipe(
  Flag.withMetavar("kinds"),
  Flag.mapEffect(parsed(parseEventKinds)),
  Flag.optional,
  Flag.withDescription(`Comma-separated event kinds among ${WebhookEventKinds.join(", ")}.`)
)
const descriptionOption = Flag.String("description").pipe(
  Flag.withSchema(WebhookDescription),
  Flag.optional,
  Flag.withDescription("Free text, at most 500 characters.")
)

const webhookCreate = Command.make(
  "create",
  {
    tenant: tenantOption,
    url: urlOption,
    events: eventsOption.pipe(Flag.withDescription("Without it the subscription gets every kind, those added later included.")),
    description: descriptionOption,
    json
  },
  (args) =>
    createWebhook({
      tenant: args.tenant,
      url: args.url,
      events: Option.getOrUndefined(args.events),
      description: Option.getOrUndefined(args.description)
    }).pipe(Effect.flatMap((created) => print(webhookCreated(created), args.json)))
).pipe(Command.withDescription("Subscribe a URL to a tenant's events; the signing secret is printed once."))

const webhookList = Command.make(
  "list",
  { tenant: tenantOption, json },
  (args) => listWebhooks(args.tenant).pipe(Effect.flatMap((listed) => print(webhooksListed(listed), args.json)))
).pipe(Command.withDescription("Every webhook subscription of a tenant."))

const webhookShow = Command.make(
  "show",
  { id: subscriptionId, json },
  (args) => getWebhook(args.id).pipe(Effect.flatMap((subscription) => print(webhookShown("")(subscription), args.json)))
).pipe(Command.withDescription("One webhook subscription: its URL, events, state and failures in a row."))

const webhookUpdate = Command.make(
  "update",
  { id: subscriptionId, url: urlOption.pipe(Flag.optional), events: eventsOption, description: descriptionOption, json },
  (args) =>
    updateWebhook(args.id, {
      url: Option.getOrUndefined(args.url),
      events: Option.getOrUndefined(args.events),
      description: Option.getOrUndefined(args.description)
    }).pipe(Effect.flatMap((subscription) => print(webhookShown(" updated.")(subscription), args.json)))
).pipe(Command.withDescription("Change a subscription's URL, events (replacing them) or description; what is not given stays."))

const webhookDelete = Command.make(
  "delete",
  { id: subscriptionId, json },
  (args) => deleteWebhook(args.id).pipe(Effect.flatMap(() => print(webhookDeleted(args.id), args.json)))
).pipe(Command.withDescription("Delete a webhook subscription."))

const webhookSwitch = (enabled: boolean) =>
  Command.make(
    enabled ? "enable" : "disable",
    { id: subscriptionId, json },
    (args) =>
      setWebhookEnabled(args.id, enabled).pipe(
        Effect.flatMap((subscription) => print(webhookShown(enabled ? " enabled." : " disabled.")(subscription), args.json))
      )
  ).pipe(
    Command.withDescription(
      enabled
        ? "Enable a subscription again (its failures in a row start from 0)."
        : "Disable a subscription: nothing is delivered to it until it is enabled."
    )
  )

const webhookRotateSecret = Command.make(
  "rotate-secret",
  {
    id: subscriptionId,
    graceSeconds: Flag.String("grace").pipe(
      Flag.withMetavar("duration"),
      Flag.withDefault("24h"),
      Flag.mapEffect(parsed(parseGraceDuration)),
      Flag.withDescription(
        "How long deliveries also carry a signature made with the previous secret (default 24h): 30s, 15m, 24h, 7d at most; 0 for none."
      )
    ),
    json
  },
  (args) => rotateWebhookSecret(args.id, args.graceSeconds).pipe(Effect.flatMap((rotated) => print(webhookSecretRotated(rotated), args.json)))
).pipe(Command.withDescription("Give a subscription a new signing secret, printed once."))

const webhookDeliveries = Command.make(
  "deliveries",
  {
    id: subscriptionId,
    status: choice("status", DeliveryStatus.literals).pipe(Flag.optional, Flag.withDescription("Only the deliveries in this status.")),
    limit: Flag.Int("limit").pipe(
      Flag.withSchema(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1000 }))),
      Flag.optional,
      Flag.withDescription("At most this many, 1 to 1000 (the service's default when absent: 50).")
    ),
    json
  },
  (args) =>
    listWebhookDeliveries(args.id, { status: Option.getOrUndefined(args.status), limit: Option.getOrUndefined(args.limit) }).pipe(
      Effect.flatMap((deliveries) => print(deliveriesListed(args.id, Option.getOrUndefined(args.status), deliveries), args.json))
    )
).pipe(Command.withDescription("The deliveries of a subscription, newest first."))

const webhookAttempts = Command.make(
  "attempts",
  { deliveryId, json },
  (args) => listDeliveryAttempts(args.deliveryId).pipe(Effect.flatMap((attempts) => print(attemptsListed(args.deliveryId, attempts), args.json)))
).pipe(Command.withDescription("Every POST made for one delivery: its status code or error, its duration, the start of the answer."))

const webhookRedeliver = Command.make(
  "redeliver",
  { deliveryId, json },
  (args) => redeliver(args.deliveryId).pipe(Effect.flatMap((delivery) => print(redelivered(delivery), args.json)))
).pipe(Command.withDescription("Send one delivery again now, whatever its status, with a fresh retry schedule; its subscription must be enabled."))

const webhookRecover = Command.make(
  "recover",
  {
    id: subscriptionId,
    since: Flag.String("since").pipe(
      Flag.withMetavar("time"),
      Flag.mapEffect(parsed(parseSince)),
      Flag.withDescription("ISO 8601 time with Z or an offset (2026-07-01T10:00:00Z), or a date (midnight UTC).")
    ),
    json
  },
  (args) => recoverWebhookDeliveries(args.id, args.since).pipe(Effect.flatMap((result) => print(recovered(args.id, args.since, result), args.json)))
).pipe(Command.withDescription("Send again every failed delivery of a subscription created since a time; prints how many."))

export const webhookCommand = Command.make("webhook").pipe(
  Command.withDescription("Webhook subscriptions and their deliveries (webhook-dispatcher admin API)."),
  Command.withSubcommands([
    webhookCreate,
    webhookList,
    webhookShow,
    webhookUpdate,
    webhookDelete,
    webhookSwitch(true),
    webhookSwitch(false),
    webhookRotateSecret,
    webhookDeliveries,
    webhookAttempts,
    webhookRedeliver,
    webhookRecover
  ])
)
