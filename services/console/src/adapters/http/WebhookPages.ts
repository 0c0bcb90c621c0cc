import type { DeliveryAttempt, WebhookDelivery, WebhookSubscription } from "@portfolio/domain"
import { WebhookEventKinds } from "@portfolio/domain"
import { escapeHtml } from "@portfolio/platform/http"
import type { DateTime } from "effect"
import type { Membership } from "../../ports/DirectoryDesk.js"
import type { Member } from "../../usecases/SignIn.js"
import { csrfField, errorBlock, html, noticeBlock, when } from "./Pages.js"

const moment = (d: DateTime.Utc | null) => when(d, { none: "", seconds: true })

const stateText = (s: WebhookSubscription) =>
  s.state === "enabled" ? "enabled" : s.disabledReason === "consecutive_failures" ? `disabled after ${s.consecutiveFailures} failures in a row` : "disabled"

export interface SubscriptionForm {
  readonly url: string
  readonly description: string
  readonly events: ReadonlyArray<string>
}

const fields = (form: SubscriptionForm | undefined) => `<label for="url">URL (https)</label>
<input id="url" name="url" type="url" required maxlength="2048" value="${escapeHtml(form?.url ?? "")}">
<label for="description">Description</label>
<input id="description" name="description" maxlength="500" value="${escapeHtml(form?.description ?? "")}">
<fieldset><legend>Events (none ticked: every event, those added later included)</legend>
${WebhookEventKinds.map((k) =>
  `<label style="font-weight:normal"><input type="checkbox" name="events" value="${k}" style="width:auto"${form?.events.includes(k) === true ? " checked" : ""}> ${k}</label>`
).join("\n")}
</fieldset>`

export const webhooksPage = (member: Member, membership: Membership, csrf: string, list: ReadonlyArray<WebhookSubscription>, notice?: string) =>
  html(
    200,
    "Webhooks",
    `${noticeBlock(notice)}<p><a href="/console/admin/webhooks/new">New subscription</a></p>
${
      list.length === 0 ? "<p>No subscription yet.</p>" : `<table>
<thead><tr><th>URL</th><th>Description</th><th>Events</th><th>State</th></tr></thead>
<tbody>
${
        list.map((s) =>
          `<tr><td><a href="/console/admin/webhooks/${escapeHtml(s.id)}">${escapeHtml(s.url)}</a></td><td>${escapeHtml(s.description)}</td><td>${
            s.allEvents ? "all" : s.events.map(escapeHtml).join(", ")
          }</td><td>${stateText(s)}</td></tr>`
        ).join("\n")
      }
</tbody></table>`
    }`,
    { member, membership, csrf }
  )

export const newWebhookPage = (status: number, member: Member, membership: Membership, csrf: string, form?: SubscriptionForm, error?: string) =>
  html(
    status,
    "New webhook subscription",
    `${errorBlock(error)}
<form method="post" action="/console/admin/webhooks/new">
${csrfField(csrf)}
${fields(form)}
<p><button type="submit">Create</button></p>
</form>`,
    { member, membership, csrf }
  )

/** The signing secret, on the answer of a creation or a rotation only. */
export const secretPage = (member: Member, membership: Membership, csrf: string, subscription: WebhookSubscription, secret: string, rotated: boolean) =>
  html(
    200,
    rotated ? "New signing secret" : "Subscription created",
    `<p class="notice" role="status">${rotated ? "The secret is rotated" : "The subscription is created"} for <strong>${escapeHtml(subscription.url)}</strong>.</p>
<p><strong>This signing secret is shown once, now.</strong> Store it in your receiver's configuration; nobody can see it again.${
      rotated ? " Deliveries carry a second signature made with the previous secret until the grace period ends." : ""
    }</p>
<label for="secret">Signing secret</label>
<input id="secret" class="token" readonly value="${escapeHtml(secret)}">
<p><button type="button" data-copy="secret" hidden>Copy</button> <span data-copied hidden>Copied.</span></p>
<p class="muted">Receivers check <code>webhook-signature</code> (Standard Webhooks) or <code>X-Service-Signature</code> with it.</p>
<p><a href="/console/admin/webhooks/${escapeHtml(subscription.id)}">Back to the subscription</a></p>`,
    { member, membership, csrf }
  )

export const webhookPage = (
  member: Member,
  membership: Membership,
  csrf: string,
  view: { readonly subscription: WebhookSubscription; readonly deliveries: ReadonlyArray<WebhookDelivery>; readonly notice?: string; readonly error?: string; readonly status?: number; readonly form?: SubscriptionForm }
) => {
  const s = view.subscription
  const base = `/console/admin/webhooks/${escapeHtml(s.id)}`
  return html(
    view.status ?? 200,
    "Webhook subscription",
    `${noticeBlock(view.notice)}${errorBlock(view.error)}
<p><strong>${escapeHtml(s.url)}</strong>: ${stateText(s)}${
      s.previousSecretExpiresAt === null ? "" : `; the previous secret signs too until ${moment(s.previousSecretExpiresAt)}`
    }.</p>
<form method="post" action="${base}/${s.state === "enabled" ? "disable" : "enable"}" class="inline">${csrfField(csrf)}<button type="submit">${
      s.state === "enabled" ? "Disable" : "Enable"
    }</button></form>
<h2>Edit</h2>
<form method="post" action="${base}">
${csrfField(csrf)}
${fields(view.form ?? { url: s.url, description: s.description, events: s.allEvents ? [] : s.events })}
<p><button type="submit">Save</button></p>
</form>
<h2>Signing secret</h2>
<form method="post" action="${base}/rotate-secret">
${csrfField(csrf)}
<label for="graceHours">Hours during which the previous secret still signs (0 to 168)</label>
<input id="graceHours" name="graceHours" type="number" min="0" max="168" value="24" required>
<p><button type="submit">Rotate the secret</button></p>
</form>
<h2>Deliveries</h2>
<form method="post" action="${base}/recover">
${csrfField(csrf)}
<label for="since">Deliver again every failed delivery since (UTC)</label>
<input id="since" name="since" type="datetime-local" required>
<p><button type="submit">Recover</button></p>
</form>
${
      view.deliveries.length === 0 ? "<p>No delivery yet.</p>" : `<table>
<thead><tr><th>Created</th><th>Event</th><th>Status</th><th>Attempts</th><th>Next attempt</th><th></th></tr></thead>
<tbody>
${
        view.deliveries.map((d) =>
          `<tr data-delivery="${escapeHtml(d.id)}"><td>${moment(d.createdAt)}</td><td>${escapeHtml(d.eventType)}</td><td>${d.status}${
            d.failureReason === null ? "" : ` (${d.failureReason.replace("_", " ")})`
          }</td><td><a href="${base}/deliveries/${escapeHtml(d.id)}">${d.attempts}</a></td><td>${moment(d.nextAttemptAt)}</td><td>${
            d.status === "pending" ? "" : `<form method="post" action="${base}/deliveries/${escapeHtml(d.id)}/redeliver" class="inline">${csrfField(csrf)}<button type="submit">Redeliver</button></form>`
          }</td></tr>`
        ).join("\n")
      }
</tbody></table>`
    }`,
    { member, membership, csrf }
  )
}

export const attemptsPage = (
  member: Member,
  membership: Membership,
  csrf: string,
  view: { readonly subscription: WebhookSubscription; readonly delivery: WebhookDelivery; readonly attempts: ReadonlyArray<DeliveryAttempt> }
) =>
  html(
    200,
    "Delivery attempts",
    `<p>${escapeHtml(view.delivery.eventType)} (event <code>${escapeHtml(view.delivery.eventId)}</code>) to ${escapeHtml(view.subscription.url)}: ${view.delivery.status}.</p>
<table>
<thead><tr><th>#</th><th>Started</th><th>Duration</th><th>Answer</th><th>First 1 KB of the answer</th></tr></thead>
<tbody>
${
      view.attempts.map((a) =>
        `<tr><td>${a.attempt}</td><td>${moment(a.startedAt)}</td><td>${a.durationMs} ms</td><td>${a.statusCode === null ? escapeHtml(a.error ?? "") : a.statusCode}</td><td><pre>${
          escapeHtml(a.responseBody)
        }</pre></td></tr>`
      ).join("\n")
    }
</tbody></table>
<p><a href="/console/admin/webhooks/${escapeHtml(view.subscription.id)}">Back to the subscription</a></p>`,
    { member, membership, csrf }
  )
