import { escapeHtml } from "@portfolio/platform/http"
import { DateTime } from "effect"
import type { MailMessage } from "./InvitationMail.js"

export interface SubscriptionDisabledMailInput {
  readonly to: string
  readonly tenantSlug: string
  readonly subscriptionId: string
  readonly url: string
  readonly consecutiveFailures: number
  readonly lastError: string
  readonly disabledAt: DateTime.Utc
}

/** The receiver's last answer is its own text, of any length: a mail quotes its beginning only. */
const LastErrorLimit = 500

const quoted = (error: string) => {
  const flat = error.replace(/\s+/g, " ").trim()
  return flat.length > LastErrorLimit ? `${flat.slice(0, LastErrorLimit)}…` : flat === "" ? "(none recorded)" : flat
}

/**
 * The URL as the admins may read it in a mailbox: credentials in its user-info part, if the
 * receiver was ever given some there, are not repeated in a message that may be forwarded.
 */
const shownUrl = (url: string) => {
  if (!URL.canParse(url)) return url
  const parsed = new URL(url)
  if (parsed.username === "" && parsed.password === "") return url
  parsed.username = ""
  parsed.password = ""
  return parsed.href
}

// The subject names only the host: a path or query may be long, or carry a receiver's token.
const hostOf = (url: string) => (URL.canParse(url) ? new URL(url).host : "its receiver")

const readableUtc = (at: DateTime.Utc) =>
  `${DateTime.format(at, { locale: "en-GB", dateStyle: "full", timeStyle: "short", timeZone: "UTC" })} UTC`

/**
 * The notice to one tenant-admin that a webhook subscription was disabled: where it pointed, how
 * many deliveries failed in a row and the last error, and how an operator turns it back on and
 * replays what it missed (docs/product-rules.md#events).
 */
export const subscriptionDisabledMail = (input: SubscriptionDisabledMailInput): MailMessage => {
  const url = shownUrl(input.url)
  const lastError = quoted(input.lastError)
  const disabledAt = readableUtc(input.disabledAt)
  const since = "<time>"
  const enable = `portfolio webhook enable ${input.subscriptionId}`
  const recover = `portfolio webhook recover ${input.subscriptionId} --since ${since}`
  const failures = `${input.consecutiveFailures} consecutive failed deliveries`
  const sinceHint = `sends again every delivery that failed from ${since} on, an ISO 8601 time before the first failure (the last one, which disabled it, was at ${DateTime.formatIso(input.disabledAt)}).`
  return {
    to: input.to,
    subject: `Webhook to ${hostOf(input.url)} disabled in ${input.tenantSlug} after ${input.consecutiveFailures} failed deliveries`,
    text: [
      `The webhook subscription ${input.subscriptionId} of the workspace ${input.tenantSlug} was disabled on ${disabledAt}, after ${failures}.`,
      "",
      `URL: ${url}`,
      `Last error: ${lastError}`,
      "",
      "No event is sent to it while it is disabled. Once the receiver answers again, ask your operator to run:",
      `  ${enable}`,
      `  ${recover}`,
      `The first turns the subscription back on; the second ${sinceHint}`,
      "",
      "You receive this message as a tenant-admin of the workspace."
    ].join("\n"),
    html: [
      `<p>The webhook subscription <code>${escapeHtml(input.subscriptionId)}</code> of the workspace <strong>${escapeHtml(input.tenantSlug)}</strong> was disabled on ${escapeHtml(disabledAt)}, after ${escapeHtml(failures)}.</p>`,
      `<p>URL: <code>${escapeHtml(url)}</code><br>Last error: <code>${escapeHtml(lastError)}</code></p>`,
      "<p>No event is sent to it while it is disabled. Once the receiver answers again, ask your operator to run:</p>",
      `<pre>${escapeHtml(enable)}\n${escapeHtml(recover)}</pre>`,
      `<p>The first turns the subscription back on; the second ${escapeHtml(sinceHint)}</p>`,
      "<p>You receive this message as a tenant-admin of the workspace.</p>"
    ].join("\n")
  }
}
