import type { MailMessage } from "@portfolio/domain/ports/provisioning"
import { DateTime } from "effect"
import { escapeHtml } from "../Html.js"


export interface InvitationMailInput {
  readonly to: string
  readonly tenantSlug: string
  readonly invitedByEmail: string
  readonly arbRole: string
  readonly link: string
  readonly expiresAt: DateTime.Utc
}

export const invitationMail = (input: InvitationMailInput): MailMessage => {
  const expires = DateTime.formatIso(input.expiresAt)
  return {
    to: input.to,
    subject: `You are invited to join ${input.tenantSlug} on Architecture Portfolio`,
    text: [
      `${input.invitedByEmail} invited you to join the workspace ${input.tenantSlug} as ${input.arbRole}.`,
      "",
      "Open this link to accept and choose your password:",
      input.link,
      "",
      `The link works once and expires at ${expires}.`,
      "If you did not expect this invitation, ignore this message."
    ].join("\n"),
    html: [
      `<p>${escapeHtml(input.invitedByEmail)} invited you to join the workspace <strong>${escapeHtml(input.tenantSlug)}</strong> as ${escapeHtml(input.arbRole)}.</p>`,
      `<p><a href="${escapeHtml(input.link)}">Accept the invitation and choose your password</a></p>`,
      `<p>The link works once and expires at ${escapeHtml(expires)}. If you did not expect this invitation, ignore this message.</p>`
    ].join("\n")
  }
}
