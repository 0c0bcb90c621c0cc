import type { Invitation, Member as TenantMember } from "@portfolio/domain"
import { ArbRole } from "@portfolio/domain"
import { escapeHtml } from "@portfolio/platform/http"
import type { Membership } from "../../ports/DirectoryDesk.js"
import type { Member } from "../../usecases/SignIn.js"
import { csrfField, errorBlock, html, noticeBlock, when } from "./Pages.js"


export const membersPage = (
  member: Member,
  membership: Membership,
  csrf: string,
  view: {
    readonly members: ReadonlyArray<TenantMember>
    readonly invitations: ReadonlyArray<Invitation>
    readonly notice?: string
    readonly error?: string
    readonly status?: number
    readonly form?: { readonly email: string; readonly arbRole: string }
  }
) =>
  html(
    view.status ?? 200,
    "Members",
    `${noticeBlock(view.notice)}${errorBlock(view.error)}
<h2>Invite someone</h2>
<form method="post" action="/console/admin/members/invite">
${csrfField(csrf)}
<label for="email">E-mail</label>
<input id="email" name="email" type="email" required maxlength="254" value="${escapeHtml(view.form?.email ?? "")}">
<label for="arbRole">Role</label>
<select id="arbRole" name="arbRole">${
      ArbRole.literals.map((r) => `<option value="${r}"${(view.form?.arbRole ?? "viewer") === r ? " selected" : ""}>${r}</option>`).join("")
    }</select>
<p><button type="submit">Send the invitation</button></p>
</form>
<h2>Members</h2>
<table>
<thead><tr><th>E-mail</th><th>Role</th><th>Joined by</th><th>Since</th><th></th></tr></thead>
<tbody>
${
      view.members.map((m) =>
        `<tr data-member="${escapeHtml(m.userSub)}"><td>${escapeHtml(m.userEmail)}</td><td>${m.arbRole}</td><td>${m.source.toLowerCase().replace("_", " ")}</td><td>${when(m.grantedAt)}</td>
<td><form method="post" action="/console/admin/members/${encodeURIComponent(m.userSub)}/remove" class="inline">${csrfField(csrf)}<button type="submit">Remove</button></form></td></tr>`
      ).join("\n")
    }
</tbody></table>
<h2>Invitations</h2>
${
      view.invitations.length === 0 ? "<p>No invitation.</p>" : `<table>
<thead><tr><th>E-mail</th><th>Role</th><th>Status</th><th>Invited by</th><th>Expires</th><th></th></tr></thead>
<tbody>
${
        view.invitations.map((i) =>
          `<tr data-invitation="${escapeHtml(i.id)}"><td>${escapeHtml(i.email)}</td><td>${i.arbRole}</td><td>${i.status.toLowerCase()}</td><td>${escapeHtml(i.invitedByEmail)}</td><td>${when(i.expiresAt)}</td><td>${
            i.status === "PENDING"
              ? `<form method="post" action="/console/admin/invitations/${escapeHtml(i.id)}/revoke" class="inline">${csrfField(csrf)}<button type="submit">Revoke</button></form>`
              : ""
          }</td></tr>`
        ).join("\n")
      }
</tbody></table>`
    }`,
    { member, membership, csrf }
  )
