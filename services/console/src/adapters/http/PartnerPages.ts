import type { PartnerClient, PartnerClientWithSecret } from "@portfolio/domain"
import { escapeHtml } from "@portfolio/platform/http"
import type { Membership } from "../../ports/DirectoryDesk.js"
import type { Member } from "../../usecases/SignIn.js"
import { csrfField, errorBlock, html, noticeBlock, when } from "./Pages.js"


export const partnersPage = (
  member: Member,
  membership: Membership,
  csrf: string,
  view: { readonly clients: ReadonlyArray<PartnerClient>; readonly notice?: string; readonly error?: string; readonly status?: number; readonly form?: { readonly name: string; readonly scope: string } }
) =>
  html(
    view.status ?? 200,
    "Partner clients",
    `${noticeBlock(view.notice)}${errorBlock(view.error)}
<p>Long-term partners call the API with OAuth 2.0 client credentials: their client exchanges its id and secret for a 5-minute access token.</p>
<h2>New client</h2>
<form method="post" action="/console/admin/partners/new">
${csrfField(csrf)}
<label for="name">Name (lowercase letters, digits and '-'; unique in the tenant; the client id is service-partner-&lt;name&gt;-&lt;random suffix&gt;)</label>
<input id="name" name="name" required maxlength="40" pattern="[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?" value="${escapeHtml(view.form?.name ?? "")}">
<label for="scope">Scope</label>
<select id="scope" name="scope">${["read", "write"].map((s) => `<option value="${s}"${(view.form?.scope ?? "read") === s ? " selected" : ""}>${s}</option>`).join("")}</select>
<p><button type="submit">Create</button></p>
</form>
<h2>Clients</h2>
${
      view.clients.length === 0 ? "<p>No partner client yet.</p>" : `<table>
<thead><tr><th>Client id</th><th>Scope</th><th>State</th><th>Created</th><th></th></tr></thead>
<tbody>
${
        view.clients.map((c) => {
          const base = `/console/admin/partners/${escapeHtml(c.clientId)}`
          return `<tr data-client="${escapeHtml(c.clientId)}"><td><code>${escapeHtml(c.clientId)}</code></td><td>${c.scope}</td><td>${c.state}${
            c.previousSecretExpiresAt === null ? "" : `<br><span class="muted">previous secret valid until ${when(c.previousSecretExpiresAt)}</span>`
          }</td><td>${when(c.createdAt)}</td><td>
<form method="post" action="${base}/${c.state === "enabled" ? "disable" : "enable"}" class="inline">${csrfField(csrf)}<button type="submit">${c.state === "enabled" ? "Disable" : "Enable"}</button></form>
<form method="post" action="${base}/rotate-secret" class="inline">${csrfField(csrf)}<input type="hidden" name="graceHours" value="24"><button type="submit">Rotate the secret</button></form>
</td></tr>`
        }).join("\n")
      }
</tbody></table>`
    }`,
    { member, membership, csrf }
  )

/** The client's secret, on the answer of a creation or a rotation only. */
export const partnerSecretPage = (member: Member, membership: Membership, csrf: string, client: PartnerClientWithSecret, rotated: boolean, tokenUrl: string) =>
  html(
    200,
    rotated ? "New client secret" : "Partner client created",
    `<p class="notice" role="status">${rotated ? "The secret is rotated" : "The client is created"}: <code>${escapeHtml(client.clientId)}</code>, scope ${client.scope}.</p>
<p><strong>This client secret is shown once, now.</strong> Hand it over to the partner through a secure channel; nobody can see it again.${
      rotated ? " The previous secret stays valid for 24 hours, so that the partner can switch without a failed call." : ""
    }</p>
<label for="clientId">client_id</label>
<input id="clientId" class="token" readonly value="${escapeHtml(client.clientId)}">
<label for="secret">client_secret</label>
<input id="secret" class="token" readonly value="${escapeHtml(client.clientSecret)}">
<p><button type="button" data-copy="secret" hidden>Copy the secret</button> <span data-copied hidden>Copied.</span></p>
<p class="muted">The partner asks <code>POST ${escapeHtml(tokenUrl)}</code> with <code>grant_type=client_credentials</code> and these credentials (HTTP Basic) for a 5-minute access token.</p>
<p><a href="/console/admin/partners">Back to the partner clients</a></p>`,
    { member, membership, csrf }
  )
