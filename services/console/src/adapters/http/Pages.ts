import type { PatRequest, PatSummary } from "@portfolio/domain"
import { HttpServerResponse } from "effect/http"
import { DateTime, Option } from "effect"
import { actorLabel, PatDefaultDays, PatJustificationMinLength, PatMaxDays, type SecurityEvent, widestScopeOf } from "@portfolio/domain"
import { escapeHtml } from "@portfolio/platform/http"
import type { Membership } from "../../ports/DirectoryDesk.js"
import type { Member } from "../../usecases/SignIn.js"

/**
 * Every page: no caching (pages show tokens and personal data), no framing, no script but the
 * console's own file, forms posted only to the console.
 */
const pageHeaders = {
  "cache-control": "no-store",
  "referrer-policy": "same-origin",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
}

const style = `body{font-family:system-ui,sans-serif;margin:0;line-height:1.5;color:#1b1f24}
header{display:flex;gap:1.5rem;align-items:center;padding:.75rem 1.5rem;background:#1f3a5f;color:#fff;flex-wrap:wrap}
header a{color:#fff}header .who{margin-left:auto}header form{display:inline}
main{max-width:60rem;margin:2rem auto;padding:0 1.5rem}
table{border-collapse:collapse;width:100%;margin:1rem 0}th,td{text-align:left;padding:.4rem .6rem;border-bottom:1px solid #d0d7de;vertical-align:top}
label{display:block;margin-top:1rem;font-weight:600}input,select,textarea{width:100%;padding:.5rem;font-size:1rem;box-sizing:border-box}
textarea{min-height:6rem}button{padding:.5rem 1rem;font-size:1rem;cursor:pointer}
.inline{display:inline}.inline input{width:auto}
.error{color:#a40e26;background:#ffebe9;padding:.5rem .75rem;border-radius:4px}
.notice{color:#0a3069;background:#ddf4ff;padding:.5rem .75rem;border-radius:4px}
.token{font-family:ui-monospace,monospace;font-size:1.05rem;width:100%}
.muted{color:#57606a}`

export const html = (
  status: number,
  title: string,
  body: string,
  member?: { readonly member: Member; readonly membership?: Membership; readonly csrf: string },
  head = ""
) =>
  HttpServerResponse.text(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">${head}
<title>${escapeHtml(title)} · Portfolio console</title>
<style>${style}</style>
<script src="/console/assets/console.js" defer></script>
</head>
<body>
${member === undefined ? "<header><strong>Portfolio console</strong></header>" : headerOf(member.member, member.membership, member.csrf)}
<main>
<h1>${escapeHtml(title)}</h1>
${body}
</main>
</body>
</html>
`, { contentType: "text/html; charset=utf-8", status, headers: pageHeaders })

const headerOf = (member: Member, membership: Membership | undefined, csrf: string) => `<header>
<strong>Portfolio console</strong>
${membership === undefined ? "" : `<span>${escapeHtml(membership.tenantSlug)}</span>
<nav><a href="/console/tokens">My tokens</a>${
  membership.role === "tenant-admin" ? ` · <a href="/console/admin/requests">Token requests</a> · <a href="/console/admin/members">Members</a> · <a href="/console/admin/partners">Partners</a> · <a href="/console/admin/webhooks">Webhooks</a> · <a href="/console/admin/sso">Single sign-on</a> · <a href="/console/admin/scim">SCIM provisioning</a> · <a href="/console/admin/security">Security log</a>` : ""
}${member.account.memberships.length > 1 ? ` · <a href="/console/workspace">Switch workspace</a>` : ""}</nav>`}
<span class="who">${escapeHtml(member.account.email)}${membership === undefined ? "" : ` (${escapeHtml(membership.role)})`}</span>
<form method="post" action="/console/sign-out">${csrfField(csrf)}<button type="submit">Sign out</button></form>
</header>`

export const csrfField = (token: string) => `<input type="hidden" name="csrf" value="${escapeHtml(token)}">`

export const errorBlock = (error: string | undefined) => (error === undefined ? "" : `<p class="error" role="alert">${escapeHtml(error)}</p>`)
export const noticeBlock = (notice: string | undefined) => (notice === undefined ? "" : `<p class="notice" role="status">${escapeHtml(notice)}</p>`)

/** A moment as the pages show it, in UTC to the minute (to the second where order matters). */
export const when = (d: { readonly epochMilliseconds: number } | null, options: { readonly none?: string; readonly seconds?: boolean } = {}) =>
  d === null ? (options.none ?? "never") : escapeHtml(new Date(d.epochMilliseconds).toISOString().slice(0, options.seconds === true ? 19 : 16).replace("T", " ") + " UTC")

export const signInPage = (
  status: number,
  options: { readonly csrf: string; readonly email?: string; readonly tenant?: string; readonly error?: string; readonly notice?: string }
) =>
  html(
    status,
    "Sign in",
    `${errorBlock(options.error)}${noticeBlock(options.notice)}
<form method="post" action="/console/sign-in">
${csrfField(options.csrf)}
<label for="email">E-mail</label>
<input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value="${escapeHtml(options.email ?? "")}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="256">
<p><button type="submit">Sign in</button></p>
</form>
<p class="muted">Your account is the one you created when you accepted your invitation.</p>
<h2>Sign in with your company's identity provider</h2>
<form method="get" action="/console/sso">
<label for="tenant">Work e-mail or workspace</label>
<input id="tenant" name="tenant" required maxlength="254" autocapitalize="none" spellcheck="false" value="${escapeHtml(options.tenant ?? "")}">
<p><button type="submit">Continue to your company's sign-in</button></p>
</form>
<p class="muted">Your work e-mail, or the workspace's short name such as <code>acme</code>, if its admins connected it to your company's sign-in.</p>`
  )

/**
 * On the way from the workspace form to the provider. Not a redirect: Chrome and Safari hold every
 * redirect after a form's submission to the form page's `form-action 'self'`, so a 303 here would
 * end, two hops on, at the provider's origin and be blocked. The refresh is a navigation of its
 * own; the link is for a browser that does not follow it.
 */
export const providerSignInContinuePage = (slug: string) => {
  const target = `/console/sso/${encodeURIComponent(slug)}`
  return html(
    200,
    "Continue to your company's sign-in",
    `<p>Taking you to the sign-in of the identity provider of <strong>${escapeHtml(slug)}</strong>.</p>
<p><a href="${escapeHtml(target)}">Continue</a></p>`,
    undefined,
    `\n<meta http-equiv="refresh" content="0; url=${escapeHtml(target)}">`
  )
}

/** Several workspaces sign in the e-mail's domain through their providers: the person picks one. */
export const providerChoicePage = (slugs: ReadonlyArray<string>) =>
  html(
    200,
    "Choose your workspace",
    `<p>Several workspaces sign in people of this e-mail's domain through their company's provider:</p>
<ul>${slugs.map((slug) => `<li><a href="${escapeHtml(`/console/sso/${encodeURIComponent(slug)}`)}">${escapeHtml(slug)}</a></li>`).join("")}</ul>`
  )

export const workspacePage = (member: Member, csrf: string) =>
  html(
    200,
    "Choose a workspace",
    `<form method="post" action="/console/workspace">
${csrfField(csrf)}
${member.account.memberships.map((m, i) =>
      `<label><input type="radio" name="tenantId" value="${escapeHtml(m.tenantId)}"${i === 0 ? " checked" : ""} style="width:auto"> ${escapeHtml(m.tenantSlug)} (${escapeHtml(m.role)})</label>`
    ).join("\n")}
<p><button type="submit">Continue</button></p>
</form>`,
    { member, csrf }
  )

const statusText = (r: PatRequest) =>
  r.status === "pending"
    ? `pending until ${when(r.expiresAt)}`
    : r.status === "expired"
    ? "expired undecided: file a new request"
    : r.status === "closed"
    ? escapeHtml(r.reason ?? "closed undecided")
    : r.status === "approved"
    ? `approved by ${escapeHtml(r.decidedBy?.email ?? "an operator")}`
    : `denied by ${escapeHtml(r.decidedBy?.email ?? "an operator")}: ${escapeHtml(r.reason ?? "")}`

export const tokensPage = (
  member: Member,
  membership: Membership,
  csrf: string,
  view: {
    readonly tokens: ReadonlyArray<PatSummary>
    readonly requests: ReadonlyArray<PatRequest>
    /** The cursor of the page of older requests, when there are more. */
    readonly nextRequests?: Option.Option<string>
    readonly notice?: string
    readonly error?: string
  }
) =>
  html(
    view.error === undefined ? 200 : 409,
    "My tokens",
    `${noticeBlock(view.notice)}${errorBlock(view.error)}
<p><a href="/console/tokens/new">Request a token</a></p>
<h2>Active tokens</h2>
${
      view.tokens.length === 0 ? "<p>You have no active token.</p>" : `<table>
<thead><tr><th>Prefix</th><th>Scope</th><th>Created</th><th>Expires</th><th>Last used</th><th></th></tr></thead>
<tbody>
${
        view.tokens.map((t) =>
          `<tr><td><code>${escapeHtml(t.tokenPrefix)}</code></td><td>${t.scope}</td><td>${when(t.createdAt)}</td><td>${when(t.expiresAt)}</td><td>${when(t.lastUsedAt)}</td>
<td><form method="post" action="/console/tokens/${escapeHtml(t.id)}/revoke" class="inline">${csrfField(csrf)}<button type="submit">Revoke</button></form></td></tr>`
        ).join("\n")
      }
</tbody></table>`
    }
<h2>My requests</h2>
${
      view.requests.length === 0 ? "<p>You have filed no request.</p>" : `<table>
<thead><tr><th>Filed</th><th>Scope</th><th>Days</th><th>Justification</th><th>Status</th></tr></thead>
<tbody>
${
        view.requests.map((r) =>
          `<tr><td>${when(r.createdAt)}</td><td>${r.scope}</td><td>${r.days}</td><td>${escapeHtml(r.justification)}</td><td>${statusText(r)}</td></tr>`
        ).join("\n")
      }
</tbody></table>`
    }${
      Option.match(view.nextRequests ?? Option.none(), {
        onNone: () => "",
        onSome: (cursor) => `\n<p><a href="/console/tokens?requests=${encodeURIComponent(cursor)}" rel="next">Older requests</a></p>`
      })
    }`,
    { member, membership, csrf }
  )

export interface RequestForm {
  readonly scope: string
  readonly days: string
  readonly justification: string
}

export const requestFormPage = (status: number, member: Member, membership: Membership, csrf: string, form?: RequestForm, error?: string) => {
  const widest = widestScopeOf(membership.role)
  const scopes = widest === "write" ? ["read", "write"] : ["read"]
  return html(
    status,
    "Request a token",
    `${errorBlock(error)}
<p>A tenant-admin of <strong>${escapeHtml(membership.tenantSlug)}</strong> reads your request and approves or denies it. Once approved, the admin hands the token over to you through a secure channel.</p>
<form method="post" action="/console/tokens/new">
${csrfField(csrf)}
<label for="scope">Scope</label>
<select id="scope" name="scope">${scopes.map((s) => `<option value="${s}"${form?.scope === s ? " selected" : ""}>${s}</option>`).join("")}</select>
${widest === "read" ? `<p class="muted">As ${escapeHtml(membership.role)}, your tokens can read only.</p>` : ""}
<label for="days">Lifetime in days (1 to ${PatMaxDays})</label>
<input id="days" name="days" type="number" min="1" max="${PatMaxDays}" required value="${escapeHtml(form?.days ?? String(PatDefaultDays))}">
<label for="justification">Justification (at least ${PatJustificationMinLength} characters)</label>
<textarea id="justification" name="justification" required minlength="${PatJustificationMinLength}" maxlength="2000">${escapeHtml(form?.justification ?? "")}</textarea>
<p><button type="submit">Send the request</button></p>
</form>`,
    { member, membership, csrf }
  )
}

export const adminRequestsPage = (
  member: Member,
  membership: Membership,
  csrf: string,
  view: {
    readonly pending: ReadonlyArray<PatRequest>
    /** The cursor of the page of older pending requests, when there are more. */
    readonly next?: Option.Option<string>
    readonly notice?: string
    readonly error?: string
    readonly status?: number
  }
) =>
  html(
    view.status ?? 200,
    "Token requests",
    `${noticeBlock(view.notice)}${errorBlock(view.error)}
${
      view.pending.length === 0 ? "<p>No request is waiting.</p>" : view.pending.map((r) =>
        `<section class="request" data-request="${escapeHtml(r.id)}">
<h2>${escapeHtml(r.email)} <span class="muted">(${escapeHtml(r.role)})</span></h2>
<p>Asks for a <strong>${r.scope}</strong> token for <strong>${r.days} days</strong>, filed ${when(r.createdAt)}.</p>
<blockquote>${escapeHtml(r.justification)}</blockquote>
${
          r.userSub === member.account.subject
            ? `<p class="muted">This is your own request: another tenant-admin or an operator decides it.</p>`
            : `<form method="post" action="/console/admin/requests/${escapeHtml(r.id)}/approve" class="inline">${csrfField(csrf)}<button type="submit">Approve</button></form>
<form method="post" action="/console/admin/requests/${escapeHtml(r.id)}/deny">${csrfField(csrf)}
<label for="reason-${escapeHtml(r.id)}">Reason for denying</label>
<input id="reason-${escapeHtml(r.id)}" name="reason" maxlength="500" required>
<p><button type="submit">Deny</button></p></form>`
        }
</section>`
      ).join("\n")
    }${
      Option.match(view.next ?? Option.none(), {
        onNone: () => "",
        onSome: (cursor) => `\n<p><a href="/console/admin/requests?cursor=${encodeURIComponent(cursor)}" rel="next">Older requests</a></p>`
      })
    }`,
    { member, membership, csrf }
  )

export const approvedPage = (member: Member, membership: Membership, csrf: string, view: { readonly email: string; readonly token: string; readonly scope: string; readonly expiresAt: string; readonly apiUrl: string }) =>
  html(
    200,
    "Token approved",
    `<p class="notice" role="status">The request of <strong>${escapeHtml(view.email)}</strong> is approved: a <strong>${escapeHtml(view.scope)}</strong> token valid until ${escapeHtml(view.expiresAt)}.</p>
<p><strong>This token is shown once, now.</strong> Nobody can see it again, you included. Hand it over to ${escapeHtml(view.email)} through a secure channel (a password manager's sharing, an encrypted message), never by plain e-mail or chat.</p>
<label for="token">Token</label>
<input id="token" class="token" readonly value="${escapeHtml(view.token)}">
<p><button type="button" data-copy="token" hidden>Copy</button> <span data-copied hidden>Copied.</span></p>
<p class="muted">It authenticates as <code>Authorization: Bearer &lt;token&gt;</code> on ${escapeHtml(view.apiUrl)}.</p>
<p><a href="/console/admin/requests">Back to the requests</a></p>`,
    { member, membership, csrf }
  )

export const securityLogPage = (member: Member, membership: Membership, csrf: string, events: ReadonlyArray<SecurityEvent>) =>
  html(
    200,
    "Security log",
    events.length === 0 ? "<p>Nothing recorded yet.</p>" : `<table>
<thead><tr><th>When</th><th>Who</th><th>What</th><th>On</th><th>From</th></tr></thead>
<tbody>
${
      events.map((e) =>
        `<tr><td>${when({ epochMilliseconds: DateTime.toEpochMillis(e.at) }, { seconds: true })}</td><td>${escapeHtml(actorLabel(e))}</td><td>${escapeHtml(e.action)}</td><td>${escapeHtml(e.target ?? "")}</td><td>${escapeHtml(e.ip)}<br><span class="muted">${escapeHtml(e.userAgent.slice(0, 80))}</span></td></tr>`
      ).join("\n")
    }
</tbody></table>`,
    { member, membership, csrf }
  )

export const messagePage = (status: number, title: string, text: string, member?: { readonly member: Member; readonly membership?: Membership; readonly csrf: string }) =>
  html(status, title, `<p>${escapeHtml(text)}</p><p><a href="/console">Back to the console</a></p>`, member)

/** Progressive enhancement only: the token is selectable without it. */
export const consoleScript = `document.querySelectorAll("[data-copy]").forEach(function (button) {
  button.hidden = false
  button.addEventListener("click", function () {
    var field = document.getElementById(button.getAttribute("data-copy"))
    navigator.clipboard.writeText(field.value).then(function () {
      var done = document.querySelector("[data-copied]")
      if (done) done.hidden = false
    })
  })
})
`
