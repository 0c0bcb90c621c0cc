import { DateTime } from "effect"
import { escapeHtml } from "@portfolio/platform/http"

/** A message for one recipient, in plain text and HTML. */
export interface MailMessage {
  readonly to: string
  readonly subject: string
  readonly text: string
  readonly html: string
}

export interface InvitationMailInput {
  readonly to: string
  readonly tenantSlug: string
  readonly invitedByEmail: string
  readonly arbRole: string
  readonly link: string
  readonly expiresAt: DateTime.Utc
}

// Spelled out in UTC so that every reader, whatever their mail client, sees the same instant.
export const readableUtc = (at: DateTime.Utc) =>
  `${DateTime.format(at, { locale: "en-GB", dateStyle: "full", timeStyle: "short", timeZone: "UTC" })} UTC`

export const invitationMail = (input: InvitationMailInput): MailMessage => {
  const expires = readableUtc(input.expiresAt)
  return {
    to: input.to,
    subject: `${input.invitedByEmail} invited you to join ${input.tenantSlug} on Architecture Portfolio`,
    text: [
      `${input.invitedByEmail} invited you to join the workspace ${input.tenantSlug} as ${input.arbRole}.`,
      "",
      "Open this link to accept and choose your password:",
      input.link,
      "",
      `The link works once and expires on ${expires}.`,
      "If you did not expect this invitation, ignore this message."
    ].join("\n"),
    html: [
      `<p>${escapeHtml(input.invitedByEmail)} invited you to join the workspace <strong>${escapeHtml(input.tenantSlug)}</strong> as ${escapeHtml(input.arbRole)}.</p>`,
      `<p><a href="${escapeHtml(input.link)}">Accept the invitation and choose your password</a></p>`,
      `<p>If the link does not open, copy this address into your browser: ${escapeHtml(input.link)}</p>`,
      `<p>The link works once and expires on ${escapeHtml(expires)}. If you did not expect this invitation, ignore this message.</p>`
    ].join("\n")
  }
}
