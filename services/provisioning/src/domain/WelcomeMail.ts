import { type DateTime } from "effect"
import { escapeHtml } from "@portfolio/platform/http"
import { type MailMessage, readableUtc } from "./InvitationMail.js"

export interface WelcomeMailInput {
  readonly to: string
  readonly tenantSlug: string
  readonly link: string
  readonly expiresAt: DateTime.Utc
}

/**
 * The mail to a new tenant's first tenant-admin, whose account has no password yet: the workspace
 * exists and they are its admin already; the link only lets them choose their password.
 */
export const welcomeMail = (input: WelcomeMailInput): MailMessage => {
  const expires = readableUtc(input.expiresAt)
  return {
    to: input.to,
    subject: `Your workspace ${input.tenantSlug} is ready: set your password`,
    text: [
      `The workspace ${input.tenantSlug} was created on Architecture Portfolio, with you (${input.to}) as its tenant-admin.`,
      "",
      "Open this link to choose your password:",
      input.link,
      "",
      `The link works once and expires on ${expires}.`,
      "If you did not expect this message, ignore it."
    ].join("\n"),
    html: [
      `<p>The workspace <strong>${escapeHtml(input.tenantSlug)}</strong> was created on Architecture Portfolio, with you (${escapeHtml(input.to)}) as its tenant-admin.</p>`,
      `<p><a href="${escapeHtml(input.link)}">Choose your password</a></p>`,
      `<p>If the link does not open, copy this address into your browser: ${escapeHtml(input.link)}</p>`,
      `<p>The link works once and expires on ${escapeHtml(expires)}. If you did not expect this message, ignore it.</p>`
    ].join("\n")
  }
}
