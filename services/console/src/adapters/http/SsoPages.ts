import { ArbRole, type SsoConnection } from "@portfolio/domain"
import { escapeHtml } from "@portfolio/platform/http"
import { DateTime } from "effect"
import type { Membership } from "../../ports/DirectoryDesk.js"
import type { Member } from "../../usecases/SignIn.js"
import { csrfField, errorBlock, html, noticeBlock, when } from "./Pages.js"

/** The connection's form as typed, to fill it again after a refusal: never the client secret, which is typed at every save. */
export interface SsoForm {
  readonly issuer: string
  readonly clientId: string
  /** Comma-separated. */
  readonly domains: string
  readonly defaultRole: string
  readonly roleClaim: string
  /** One `value=role` a line. */
  readonly roleMap: string
  readonly required: boolean
  /** Comma-separated. */
  readonly breakGlass: string
  /** Empty for OpenID Connect's `email_verified`. */
  readonly emailVerifiedClaim: string
}

/** The form filled with the connection as it is, so that a change starts from it. */
export const formOf = (connection: SsoConnection): SsoForm => ({
  issuer: connection.issuer,
  clientId: connection.clientId,
  domains: connection.domains.join(", "),
  defaultRole: connection.defaultRole,
  roleClaim: connection.roleClaim ?? "",
  roleMap: connection.roleMap.map((m) => `${m.value}=${m.role}`).join("\n"),
  required: connection.required,
  breakGlass: connection.breakGlass.join(", "),
  emailVerifiedClaim: connection.emailVerifiedClaim
})

const instant = (d: DateTime.Utc) => when({ epochMilliseconds: DateTime.toEpochMillis(d) })

const redirectUriBlock = (redirectUri: string, registered: boolean) => `<section class="notice">
<label for="redirectUri">Redirect URI to register at your provider</label>
<input id="redirectUri" class="token" readonly value="${escapeHtml(redirectUri)}">
<p><button type="button" data-copy="redirectUri" hidden>Copy</button> <span data-copied hidden>Copied.</span></p>
<p>${
  registered
    ? "The provider sends your people back to this address after they sign in: it must be registered there, exactly, as the client's redirect URI."
    : "Register the console's client at your provider with this address as its redirect URI (a confidential web client, authorization code flow), then fill in the form below with what the provider gives you."
}</p>
</section>`

const connectionBlock = (connection: SsoConnection, csrf: string) => `<h2>Current connection</h2>
<table>
<tbody>
<tr><th>Issuer</th><td><code>${escapeHtml(connection.issuer)}</code></td></tr>
<tr><th>Client id</th><td><code>${escapeHtml(connection.clientId)}</code></td></tr>
<tr><th>Client secret</th><td>set ${instant(connection.secretSetAt)}, never shown</td></tr>
<tr><th>Redirect URI</th><td><code>${escapeHtml(connection.redirectUri)}</code></td></tr>
<tr><th>E-mail domains</th><td>${connection.domains.map((d) => `<code>${escapeHtml(d)}</code>`).join(", ")}</td></tr>
<tr><th>Default role</th><td>${escapeHtml(connection.defaultRole)}</td></tr>
<tr><th>Role claim</th><td>${connection.roleClaim === null ? "none: everyone gets the default role" : `<code>${escapeHtml(connection.roleClaim)}</code>`}</td></tr>
<tr><th>Role map</th><td>${
  connection.roleMap.length === 0
    ? "none"
    : `<ul>${connection.roleMap.map((m) => `<li><code>${escapeHtml(m.value)}</code> gives ${escapeHtml(m.role)}</li>`).join("")}</ul>`
}</td></tr>
<tr><th>Required</th><td>${
  connection.required
    ? "yes: members sign in through the provider only, but for the break-glass accounts"
    : "no: members may still sign in with a password"
}</td></tr>
<tr><th>Break-glass accounts</th><td>${connection.breakGlass.length === 0 ? "none" : connection.breakGlass.map(escapeHtml).join(", ")}</td></tr>
<tr><th>Domains confirmed</th><td>${
  connection.domainsConfirmed
    ? "yes: a work e-mail of these domains finds this workspace at sign-in"
    : "not yet: members give the workspace's name at sign-in until an operator confirms the domains are your company's"
}</td></tr>
<tr><th>Last changed</th><td>${instant(connection.updatedAt)}</td></tr>
</tbody>
</table>
<form method="post" action="/console/admin/sso/disable">
${csrfField(csrf)}
<p><button type="submit">Disable single sign-on</button> <span class="muted">The connection and its secret are deleted; members sign in with passwords again.</span></p>
</form>`

const connectionForm = (form: SsoForm | undefined, csrf: string, replacing: boolean) => `<h2>${replacing ? "Change the connection" : "Set up the connection"}</h2>
<form method="post" action="/console/admin/sso">
${csrfField(csrf)}
<label for="issuer">Issuer (the provider's address, as its discovery document names it)</label>
<input id="issuer" name="issuer" type="url" required maxlength="2048" placeholder="https://login.example.com" value="${escapeHtml(form?.issuer ?? "")}">
<label for="clientId">Client id</label>
<input id="clientId" name="clientId" required maxlength="255" autocomplete="off" value="${escapeHtml(form?.clientId ?? "")}">
<label for="clientSecret">Client secret (needed at every save: it is never shown again, here or anywhere)</label>
<input id="clientSecret" name="clientSecret" type="password" required maxlength="1024" autocomplete="new-password">
<label for="domains">E-mail domains, separated by commas (only people whose verified e-mail is in one of them can sign in)</label>
<input id="domains" name="domains" required placeholder="example.com, example.org" value="${escapeHtml(form?.domains ?? "")}">
<label for="defaultRole">Default role of a member's first sign-in</label>
<select id="defaultRole" name="defaultRole">${
  ArbRole.literals.map((r) => `<option value="${r}"${(form?.defaultRole ?? "viewer") === r ? " selected" : ""}>${r}</option>`).join("")
}</select>
<label for="roleClaim">Role claim (optional: the id token's claim whose values the role map reads, such as groups)</label>
<input id="roleClaim" name="roleClaim" maxlength="100" value="${escapeHtml(form?.roleClaim ?? "")}">
<label for="emailVerifiedClaim">E-mail verified claim (email_verified; xms_edov for Microsoft Entra ID)</label>
<input id="emailVerifiedClaim" name="emailVerifiedClaim" maxlength="100" value="${escapeHtml(form?.emailVerifiedClaim ?? "email_verified")}">
<label for="roleMap">Role map (optional: one <code>value=role</code> a line; the first value the claim holds gives the role)</label>
<textarea id="roleMap" name="roleMap" placeholder="EA Team=architect">${escapeHtml(form?.roleMap ?? "")}</textarea>
<label><input type="checkbox" name="required" value="on" style="width:auto"${form?.required === true ? " checked" : ""}> Required: members may no longer sign in with a password, but for the break-glass accounts</label>
<label for="breakGlass">Break-glass accounts, separated by commas (tenant-admins who keep their password for the day the provider fails)</label>
<input id="breakGlass" name="breakGlass" value="${escapeHtml(form?.breakGlass ?? "")}">
<p><button type="submit">Save</button> <span class="muted">The issuer is checked by reading its discovery document before anything is saved.</span></p>
</form>`

/**
 * The tenant's single sign-on page: the connection as provisioning holds it (never its secret),
 * the redirect URI to register at the provider, and the form that sets it whole.
 */
export const ssoPage = (
  member: Member,
  membership: Membership,
  csrf: string,
  view: {
    readonly connection: SsoConnection | undefined
    /** Where the provider sends the browser back, before any connection says it. */
    readonly redirectUri: string
    readonly notice?: string
    readonly error?: string
    readonly status?: number
    readonly form?: SsoForm
  }
) =>
  html(
    view.status ?? 200,
    "Single sign-on",
    `${noticeBlock(view.notice)}${errorBlock(view.error)}
<p>The members of ${escapeHtml(membership.tenantSlug)} can sign in to the console through your company's OpenID Connect provider.</p>
${redirectUriBlock(view.connection?.redirectUri ?? view.redirectUri, view.connection !== undefined)}
${view.connection === undefined ? "<p><strong>No single sign-on connection</strong>: members sign in with their passwords.</p>" : connectionBlock(view.connection, csrf)}
${connectionForm(view.form ?? (view.connection === undefined ? undefined : formOf(view.connection)), csrf, view.connection !== undefined)}`,
    { member, membership, csrf }
  )
