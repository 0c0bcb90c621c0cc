import { HttpIncomingMessage, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { IdentityProvider } from "../../ports/IdentityProvider.js"
import { InvitationRepository } from "../../ports/InvitationRepository.js"
import { MemberRepository } from "../../ports/MemberRepository.js"
import { ScimUserRepository } from "../../ports/ScimUserRepository.js"
import { TenantRepository } from "../../ports/TenantRepository.js"
import { escapeHtml } from "@portfolio/platform/http"
import { type SecurityLog } from "@portfolio/platform/security"
import { UnitOfWork } from "@portfolio/platform/sql"
import { ByteSize, Effect, Result, Option, Redacted, Schema } from "effect"
import { ProvisioningSettings } from "../../Config.js"
import { MaxWrongPasswords } from "../../domain/InvitationRecord.js"
import { PasswordMaxLength, PasswordMinLength } from "../../domain/PasswordRule.js"
import { acceptInvitation, inspectInvitationLink, type PendingInvitationView } from "../../usecases/Acceptance.js"
import { publicOrigin } from "./RequestOrigin.js"

// The token sits in the URL: keep it out of caches, referrers and frames; the page needs no script.
const pageHeaders = {
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'"
}

const page = (status: number, title: string, body: string) =>
  HttpServerResponse.html(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;line-height:1.5}
label{display:block;margin-top:1rem}input{width:100%;padding:.5rem;font-size:1rem;box-sizing:border-box}
button{margin-top:1.5rem;padding:.6rem 1.2rem;font-size:1rem}.error{color:#a00}</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
${body}
</body>
</html>
`).pipe(HttpServerResponse.setStatus(status), HttpServerResponse.setHeaders(pageHeaders))

/** The same page for every link that cannot be used: it names neither the person nor the tenant. */
const unusablePage = () =>
  page(
    404,
    "This link cannot be used",
    "<p>This invitation link is not valid. It may have been used already, revoked, or it may have expired.</p><p>Ask the person who invited you for a new invitation.</p>"
  )

/**
 * The identity provider is down: nothing happened and the link still works. Like the refusal page
 * it names nothing, since the outage may last while the link is shared around.
 */
const outagePage = () =>
  page(
    503,
    "Please try again later",
    "<p>We cannot accept your invitation right now. Nothing has changed and your invitation link still works.</p><p>Please try again later.</p>"
  ).pipe(HttpServerResponse.setHeader("retry-after", "30"))

const alert = (error: string | undefined) => (error === undefined ? "" : `<p class="error" role="alert">${escapeHtml(error)}</p>`)

const invitedAs = (view: PendingInvitationView) =>
  `<p>You are invited to join <strong>${escapeHtml(view.tenantSlug)}</strong> as ${escapeHtml(view.arbRole)}, as <strong>${escapeHtml(view.email)}</strong>.</p>`

// An invitee whose account has no password yet chooses one; someone already a member of the
// tenant (the first tenant-admin with their welcome link) only chooses a password, and the page says so.
const choosePasswordPage = (status: number, view: PendingInvitationView, error?: string) =>
  page(
    status,
    view.alreadyMember ? "Set your password" : "Accept your invitation",
    `${
      view.alreadyMember
        ? `<p>Choose the password of <strong>${escapeHtml(view.email)}</strong>, a member of <strong>${escapeHtml(view.tenantSlug)}</strong>.</p>`
        : invitedAs(view)
    }
${alert(error)}
<form method="post">
<label for="password">Choose a password (${PasswordMinLength} to ${PasswordMaxLength} characters)</label>
<p id="password-hint">A few words you will remember make a good password; spaces and any characters are welcome. Common passwords, runs such as 1234 or aaaa, and the names in this invitation are refused.</p>
<input id="password" name="password" type="password" autocomplete="new-password" aria-describedby="password-hint" minlength="${PasswordMinLength}" maxlength="${PasswordMaxLength}" required>
<label for="confirm">Repeat the password</label>
<input id="confirm" name="confirm" type="password" autocomplete="new-password" minlength="${PasswordMinLength}" maxlength="${PasswordMaxLength}" required>
<button type="submit">${view.alreadyMember ? "Set password" : "Accept and set password"}</button>
</form>`
  )

// The account has a password already: its owner proves it, and it stays as it is. No password
// rule here: the password was judged when it was chosen.
const currentPasswordPage = (status: number, view: PendingInvitationView, error?: string) =>
  page(
    status,
    "Accept your invitation",
    `${
      view.alreadyMember
        ? `<p><strong>${escapeHtml(view.email)}</strong> is already a member of <strong>${escapeHtml(view.tenantSlug)}</strong>.</p>`
        : invitedAs(view)
    }
<p>You already have an account: enter your password to accept.</p>
${alert(error)}
<form method="post">
<label for="password">Your password</label>
<p id="password-hint">The password you sign in with; it stays as it is. After ${MaxWrongPasswords} wrong passwords this link stops working.</p>
<input id="password" name="password" type="password" autocomplete="current-password" aria-describedby="password-hint" required>
<button type="submit">Accept</button>
</form>`
  )

const formPage = (status: number, view: PendingInvitationView, error?: string) =>
  view.hasPassword ? currentPasswordPage(status, view, error) : choosePasswordPage(status, view, error)

const donePage = (view: PendingInvitationView) =>
  page(
    200,
    "You are in",
    view.hasPassword
      ? `<p>You are ${view.alreadyMember ? "" : "now "}a member of <strong>${escapeHtml(view.tenantSlug)}</strong>. Your password has not changed: sign in with it as before.</p>`
      : view.alreadyMember
      ? `<p>Your password is set; you are a member of <strong>${escapeHtml(view.tenantSlug)}</strong>.</p>`
      : `<p>Your password is set and you are now a member of <strong>${escapeHtml(view.tenantSlug)}</strong>.</p>`
  )

const TokenPath = Schema.Struct({ token: Schema.String.check(Schema.isPattern(/^[A-Za-z0-9_-]{43}$/u)) })
// Two password fields of at most 256 characters each, URL-encoded, fit well within this.
const FormMaxBytes = 8 * 1024
const ChooseForm = Schema.Struct({ password: Schema.String, confirm: Schema.String })
const CurrentPasswordForm = Schema.Struct({ password: Schema.String.check(Schema.isMinLength(1)) })

const token = HttpRouter.schemaPathParams(TokenPath).pipe(Effect.map(({ token }) => token))

const showForm = Effect.gen(function*() {
  const view = yield* inspectInvitationLink(yield* token)
  return formPage(200, view)
}).pipe(Effect.catchTags({
  NotFound: () => Effect.succeed(unusablePage()),
  SchemaError: () => Effect.succeed(unusablePage()),
  Unavailable: () => Effect.succeed(outagePage())
}))

const readForm = <A, I extends Readonly<Record<string, string | ReadonlyArray<string> | undefined>>>(schema: Schema.Codec<A, I>) =>
  HttpServerRequest.schemaBodyUrlParams(schema).pipe(
    Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(FormMaxBytes)),
    Effect.option
  )

/** The typed password, or the page that says why there is none to check. */
const typedPassword = (view: PendingInvitationView) =>
  Effect.gen(function*() {
    if (view.hasPassword) {
      const form = yield* readForm(CurrentPasswordForm)
      if (Option.isNone(form)) return Result.fail(formPage(400, view, "The form could not be read. Please type your password again."))
      return Result.succeed(form.value.password)
    }
    const form = yield* readForm(ChooseForm)
    if (Option.isNone(form)) {
      return Result.fail(formPage(400, view, `The form could not be read. Please type the password again, at most ${PasswordMaxLength} characters.`))
    }
    if (form.value.password !== form.value.confirm) return Result.fail(formPage(400, view, "The two passwords differ."))
    return Result.succeed(form.value.password)
  })

const submitForm = Effect.gen(function*() {
  const linkToken = yield* token
  const view = yield* inspectInvitationLink(linkToken)
  const typed = yield* typedPassword(view)
  if (Result.isFailure(typed)) return typed.failure
  return yield* acceptInvitation(linkToken, Redacted.make(typed.success), yield* publicOrigin).pipe(
    Effect.as(donePage(view)),
    Effect.catchTags({
      InvalidRequest: (error) => Effect.succeed(formPage(400, view, error.detail)),
      // The account's password was asked for, even if the form shown was another (it got one meanwhile).
      Unauthenticated: (error) => Effect.succeed(formPage(401, { ...view, hasPassword: true }, error.detail))
    })
  )
}).pipe(Effect.catchTags({
  NotFound: () => Effect.succeed(unusablePage()),
  SchemaError: () => Effect.succeed(unusablePage()),
  Unavailable: () => Effect.succeed(outagePage())
}))

/** `/accept/<token>`: the magic link's page (GET) and its form post (POST), plain HTML. */
export const AcceptancePageLive = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const context = yield* Effect.context<
      IdentityProvider | InvitationRepository | MemberRepository | ProvisioningSettings | ScimUserRepository | SecurityLog | TenantRepository | UnitOfWork
    >()
    yield* router.add("GET", "/accept/:token", Effect.provide(showForm, context))
    yield* router.add("POST", "/accept/:token", Effect.provide(submitForm, context))
  })
)
