import { type ScimToken, ScimTokensPerTenantMax, type ScimTokenWithSecret } from "@portfolio/domain"
import { escapeHtml } from "@portfolio/platform/http"
import type { Membership } from "../../ports/DirectoryDesk.js"
import type { Member } from "../../usecases/SignIn.js"
import { csrfField, errorBlock, html, noticeBlock, when } from "./Pages.js"

/** ScimTokenLabel's longest: the browser stops the typing there rather than the console refusing it. */
const labelMaxLength = 80

/** A tenant-admin's tokens name them `console:<e-mail>`: the e-mail is what the admins know each other by. */
const maker = (createdBy: string) => createdBy.replace(/^console:/, "")

const baseUrlField = (scimBaseUrl: string) => `<label for="scimBaseUrl">SCIM base URL</label>
<input id="scimBaseUrl" class="token" readonly value="${escapeHtml(scimBaseUrl)}">`

const tokenRow = (csrf: string) => (t: ScimToken) =>
  `<tr data-scim-token="${escapeHtml(t.id)}"><td>${escapeHtml(t.label)}</td><td><code>${escapeHtml(t.tokenPrefix)}</code></td><td>${escapeHtml(maker(t.createdBy))}</td><td>${when(t.createdAt)}</td><td>${when(t.lastUsedAt)}</td><td>${
    t.revokedAt === null ? "active" : `revoked ${when(t.revokedAt)}`
  }</td><td>${
    t.revokedAt === null
      ? `<form method="post" action="/console/admin/scim/${escapeHtml(t.id)}/revoke" class="inline">${csrfField(csrf)}<button type="submit">Revoke</button></form>`
      : ""
  }</td></tr>`

export interface ScimView {
  readonly tokens: ReadonlyArray<ScimToken>
  readonly scimBaseUrl: string
  readonly notice?: string
  readonly error?: string
  readonly status?: number
  readonly form?: { readonly label: string }
}

export const scimPage = (member: Member, membership: Membership, csrf: string, view: ScimView) =>
  html(
    view.status ?? 200,
    "SCIM provisioning",
    `${noticeBlock(view.notice)}${errorBlock(view.error)}
<p>Your identity tool (Okta, Microsoft Entra ID, OneLogin, JumpCloud) provisions and deprovisions the members of ${escapeHtml(membership.tenantSlug)} through SCIM 2.0, with a SCIM token made here and this base URL:</p>
${baseUrlField(view.scimBaseUrl)}
<p class="muted">The workspace holds at most ${ScimTokensPerTenantMax} active tokens: the one in use and its replacement. To rotate, make a new token, paste it in the tool, then revoke the old one.</p>
<h2>New token</h2>
<form method="post" action="/console/admin/scim/new">
${csrfField(csrf)}
<label for="label">Label (which tool holds it, such as "Okta production")</label>
<input id="label" name="label" required maxlength="${labelMaxLength}" value="${escapeHtml(view.form?.label ?? "")}">
<p><button type="submit">Make a token</button></p>
</form>
<h2>Tokens</h2>
${
      view.tokens.length === 0 ? "<p>No SCIM token yet.</p>" : `<table>
<thead><tr><th>Label</th><th>Prefix</th><th>Created by</th><th>Created</th><th>Last used</th><th>State</th><th></th></tr></thead>
<tbody>
${view.tokens.map(tokenRow(csrf)).join("\n")}
</tbody></table>`
    }`,
    { member, membership, csrf }
  )

/** The token, on the answer of its creation only. */
export const scimTokenPage = (member: Member, membership: Membership, csrf: string, token: ScimTokenWithSecret, scimBaseUrl: string) =>
  html(
    200,
    "SCIM token created",
    `<p class="notice" role="status">The token <strong>${escapeHtml(token.label)}</strong> is made: prefix <code>${escapeHtml(token.tokenPrefix)}</code>.</p>
<p><strong>This token is shown once, now.</strong> Paste it in the identity tool's SCIM settings with the base URL below; nobody can see it again, you included.</p>
<label for="token">SCIM token</label>
<input id="token" class="token" readonly value="${escapeHtml(token.token)}">
<p><button type="button" data-copy="token" hidden>Copy the token</button> <span data-copied hidden>Copied.</span></p>
${baseUrlField(scimBaseUrl)}
<p class="muted">The tool sends it as <code>Authorization: Bearer &lt;token&gt;</code> on the SCIM endpoints only; it is refused anywhere else.</p>
<p><a href="/console/admin/scim">Back to SCIM provisioning</a></p>`,
    { member, membership, csrf }
  )
