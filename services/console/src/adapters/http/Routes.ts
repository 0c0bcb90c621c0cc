import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { isControlCharacter, PageCursorMaxLength, PatDenialReason, PatJustification, PatMaxDays, Scope, TenantSlug, Uuid } from "@portfolio/domain"
import { Effect, Result, Option, Redacted, Schema } from "effect"
import { ConsoleSettings } from "../../Config.js"
import { newSecret, sameToken } from "../../domain/SessionRules.js"
import { minutesToWait } from "../../domain/SignInRules.js"
import type { Membership, UpstreamUnavailable } from "../../ports/DirectoryDesk.js"
import type { TokenDesk } from "../../ports/TokenDesk.js"
import { tenantSecurityLog } from "../../usecases/SecurityLog.js"
import { chooseTenant, type Member, signIn, signOut } from "../../usecases/SignIn.js"
import { beginProviderSignIn, finishProviderSignIn, providerWorkspacesOf, refuseProviderSignIn } from "../../usecases/SingleSignOn.js"
import { approveRequest, denyRequest, myTokens, requestToken, revokeMyToken, tenantRequests } from "../../usecases/Tokens.js"
import {
  adminOnly,
  cookieOptions,
  expireCookie,
  inWorkspace,
  noticeFrom,
  postedForm,
  readForm,
  redirect,
  sameOrigin,
  SessionCookie,
  signedIn,
  SignInCookie,
  SsoStateCookie
} from "./Guards.js"
import { decodeForm, firstMessage, NumberFromText } from "./FormMessages.js"
import {
  adminRequestsPage,
  approvedPage,
  providerChoicePage,
  providerSignInContinuePage,
  requestFormPage,
  securityLogPage,
  signInPage,
  tokensPage,
  workspacePage
} from "./Pages.js"

const notices = { requested: "Your request is filed. A tenant-admin will decide it.", revoked: "The token is revoked: it no longer works.", denied: "The request is denied; its requester sees your reason." } as const
const noticeOf = noticeFrom(notices)

export const IdPath = Schema.Struct({ id: Uuid })
export const pathId = Effect.map(HttpRouter.schemaPathParams(IdPath).pipe(Effect.option), Option.map((p) => p.id))

const RequestFormSchema = Schema.Struct({ scope: Schema.String, days: Schema.String, justification: Schema.String })
const ValidRequest = Schema.Struct({
  scope: Scope,
  days: NumberFromText.pipe(Schema.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: PatMaxDays }, { message: `the lifetime must be 1 to ${PatMaxDays} days` }))),
  justification: PatJustification
})
const decodeRequest = decodeForm(ValidRequest)

/** The gateway's cursor a page's "Older requests" link carries in the query parameter `name`; none without it (the newest page). */
const cursorParam = (name: string) =>
  Effect.map(
    Effect.option(HttpServerRequest.schemaSearchParams(Schema.Struct({ [name]: Schema.optional(Schema.String.pipe(Schema.check(Schema.isMaxLength(PageCursorMaxLength)))) }))),
    (query) => Option.getOrUndefined(Option.flatMap(query, (q) => Option.fromNullishOr(q[name])))
  )

/** The page of "My requests" the link of the previous one names (`?requests=<cursor>`); the newest without it. */
const requestsCursor = cursorParam("requests")

/** The page of pending requests the admins' link names (`/console/admin/requests?cursor=<cursor>`); the newest without it. */
const pendingCursor = cursorParam("cursor")

type PageNotes = { readonly notice?: string; readonly error?: string }

const tokensView = (member: Member, membership: Membership, extra: PageNotes = {}, cursor?: string): Effect.Effect<HttpServerResponse.HttpServerResponse, UpstreamUnavailable, TokenDesk> =>
  Effect.map(myTokens(member, membership, cursor), (view) => tokensPage(member, membership, member.session.csrfToken, { ...view, ...extra })).pipe(
    // A cursor edited by hand: the newest page again, saying so. The first page has no cursor to refuse.
    Effect.catchTag("Refused", (refused) =>
      cursor === undefined
        ? Effect.die(new Error(`the gateway refused the first page of requests: ${refused.detail}`))
        : tokensView(member, membership, { ...extra, error: "That page of requests does not exist; here are the newest." }))
  )

type AdminNotes = PageNotes & { readonly status?: number }

/** The tenant's pending requests, a page of them with the link to the older ones (docs/console.md). */
const adminRequestsView = (
  member: Member,
  membership: Membership,
  extra: AdminNotes = {},
  cursor?: string
): Effect.Effect<HttpServerResponse.HttpServerResponse, UpstreamUnavailable, TokenDesk> =>
  Effect.map(tenantRequests(member, membership, "pending", cursor), ({ next, requests }) =>
    adminRequestsPage(member, membership, member.session.csrfToken, { pending: requests, next, ...extra })).pipe(
      // A cursor edited by hand: the newest page again, saying so, as "My requests" does.
      Effect.catchTag("Refused", (refused) =>
        cursor === undefined
          ? Effect.die(new Error(`the gateway refused the first page of pending requests: ${refused.detail}`))
          : adminRequestsView(member, membership, { ...extra, error: "That page of requests does not exist; here are the newest.", status: 400 }))
    )

/** Sign-in, workspace and token pages (docs/console.md). */
const hasControlCharacter = (text: string) => [...text].some((character) => isControlCharacter(character.codePointAt(0)!))

/** The sign-in page, its password form given a new token bound to this browser by a cookie. */
const signInAgain = (status: number, notes: { readonly error?: string; readonly email?: string; readonly tenant?: string } = {}) =>
  Effect.gen(function*() {
    const { consoleUrl } = yield* ConsoleSettings
    const token = newSecret()
    return yield* signInPage(status, { csrf: token, ...notes }).pipe(
      HttpServerResponse.setCookie(SignInCookie, token, cookieOptions(consoleUrl.protocol === "https:", "/console/sign-in", "strict"))
    )
  })

// ---------------------------------------------------------------------------------------------
// Sign-in through the tenant's provider (docs/console.md): the browser goes to the provider with a
// state provisioning made, kept in a cookie of this browser, and must come back with the same.

const isSlug = Schema.is(TenantSlug)
/** Checked by the pages' table of path parameters (ConsolePages.ts) before the route runs. */
const pathSlug = Effect.orDie(Effect.map(HttpRouter.schemaPathParams(Schema.Struct({ slug: TenantSlug })), (path) => path.slug))
/** Sent back only to the callback of the same workspace: a sign-in begun for another does not clobber it. */
const stateCookiePath = (slug: string) => `/console/sso/${slug}/`
/** RFC 6749's characters of an error code, bounded: anything else from the URL is not written to the log as it is. */
const OAuthErrorCode = /^[\x20\x21\x23-\x5B\x5D-\x7E]{1,64}$/
const CallbackQuery = Schema.Struct({ state: Schema.optional(Schema.String), error: Schema.optional(Schema.String) })

const providerRefusal = "The sign-in with your company's provider did not succeed. Try again."
const noProvider = "There is no sign-in through a company identity provider for that workspace. Check its name, or sign in with your e-mail and password."
const providerOutage = "We cannot sign you in with your company's provider right now. Please try again in a moment."
const removedMember = "You were removed from this workspace: ask one of its tenant-admins for a new invitation."

const providerOutagePage = (slug: string, reason: string) =>
  Effect.andThen(Effect.logWarning("a sign-in through a provider could not be begun or finished", { reason }), signInAgain(503, { error: providerOutage, tenant: slug }))

export const routes = {
  root: signedIn(() => Effect.succeed(redirect("/console/tokens"))),

  signInForm: signInAgain(200),

  signIn: Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const { consoleUrl } = yield* ConsoleSettings
    const secure = consoleUrl.protocol === "https:"
    const form = yield* readForm(Schema.Struct({ email: Schema.String, password: Schema.String }))
    const cookieToken = request.cookies[SignInCookie]
    const again = (status: number, error: string, email?: string) => signInAgain(status, { error, ...(email === undefined ? {} : { email }) })
    if (!(yield* sameOrigin) || Option.isNone(form) || cookieToken === undefined || !sameToken(form.value[0].csrf, cookieToken)) {
      return yield* again(403, "The form was not sent from this page, or it is too old. Please sign in again.")
    }
    if (Result.isFailure(form.value[1])) return yield* again(400, "Please give your e-mail and password.")
    const { email, password } = form.value[1].success
    if (email.length === 0 || email.length > 254 || password.length === 0 || password.length > 256) {
      return yield* again(400, "Please give your e-mail and password.", email.slice(0, 254))
    }
    // No address holds a control character: refused as malformed before anything is looked up or
    // recorded (PostgreSQL cannot store a NUL; a terminal acts on an ESC) (docs/security.md).
    if (hasControlCharacter(email)) return yield* again(400, "Please give your e-mail and password.")
    return yield* signIn(email, Redacted.make(password)).pipe(
      Effect.flatMap((signedIn) =>
        redirect(signedIn.mustChooseTenant ? "/console/workspace" : "/console/tokens").pipe(
          // A new session id at every sign-in: one planted before it is never the member's.
          HttpServerResponse.setCookie(SessionCookie, signedIn.sessionId, cookieOptions(secure, "/console", "lax")),
          Effect.map(expireCookie(SignInCookie, { path: "/console/sign-in" }))
        )
      ),
      Effect.catchTags({
        InvalidCredentials: () => again(401, "The e-mail or the password is not right.", email),
        LockedOut: (e) => again(429, `Too many failed attempts. Try again in ${minutesToWait(e.retryAfterMs)} minutes.`, email),
        NoWorkspace: () => again(403, "Your account is no longer a member of any workspace. Ask a tenant-admin for an invitation.", email),
        SsoRequired: (e) =>
          again(
            403,
            `Your workspace ${e.tenantSlugs.join(", ")} signs you in through your company's identity provider: use "Sign in with your company's identity provider" below.`,
            email
          ),
        UpstreamUnavailable: () => again(503, "We cannot sign you in right now. Please try again in a moment.", email)
      })
    )
  }),

  /** The workspace form of the sign-in page: its name checked, then on to its provider. */
  providerSignInForm: Effect.gen(function*() {
    const query = yield* Effect.option(HttpServerRequest.schemaSearchParams(Schema.Struct({ tenant: Schema.optional(Schema.String) })))
    const typed = Option.getOrElse(Option.flatMap(query, (q) => Option.fromNullishOr(q.tenant)), () => "")
    // Slugs are lowercase: "Acme " can only mean acme.
    const slug = typed.trim().toLowerCase()
    if (isSlug(slug)) return providerSignInContinuePage(slug)
    // A work e-mail: the workspaces whose provider signs in its domain.
    const email: string = slug
    if (email.includes("@") && email.length <= 254 && !hasControlCharacter(email)) {
      return yield* providerWorkspacesOf(email).pipe(
        Effect.flatMap((slugs) =>
          slugs.length === 1
            ? Effect.succeed(providerSignInContinuePage(slugs[0]!))
            : slugs.length > 1
            ? Effect.succeed(providerChoicePage(slugs))
            : signInAgain(404, { error: "No workspace signs in the people of this e-mail's domain through their company's provider. Give the workspace's name.", tenant: typed.trim() })
        ),
        Effect.catchTag("UpstreamUnavailable", () => signInAgain(503, { error: "We cannot sign you in right now. Please try again in a moment.", tenant: typed.trim() }))
      )
    }
    return yield* signInAgain(400, {
      error: "Give your work e-mail, or the workspace's name: 1 to 40 lowercase letters, digits and '-', as in the address of its invitation.",
      // Shown again to be corrected, unless it holds what no page should echo.
      tenant: hasControlCharacter(typed) ? "" : typed.slice(0, 40)
    })
  }),

  beginProviderSignIn: Effect.gen(function*() {
    const slug = yield* pathSlug
    const { consoleUrl } = yield* ConsoleSettings
    return yield* beginProviderSignIn(slug).pipe(
      Effect.flatMap((start) =>
        HttpServerResponse.empty({ status: 302, headers: { location: start.authorizationUrl, "cache-control": "no-store", "referrer-policy": "no-referrer" } }).pipe(
          // Lax, not Strict: the provider sends the browser back with a top-level navigation from its own site.
          HttpServerResponse.setCookie(SsoStateCookie, start.state, { ...cookieOptions(consoleUrl.protocol === "https:", stateCookiePath(slug), "lax"), maxAge: "10 minutes" })
        )
      ),
      Effect.catchTags({
        NoSsoConnection: () => signInAgain(404, { error: noProvider, tenant: slug }),
        UpstreamUnavailable: (outage) => providerOutagePage(slug, outage.reason)
      })
    )
  }),

  /**
   * The browser back from the provider. What it says is checked by provisioning; here, that this
   * browser began the sign-in. The page never tells why a sign-in was refused: the log does.
   */
  finishProviderSignIn: Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const { consoleUrl } = yield* ConsoleSettings
    const secure = consoleUrl.protocol === "https:"
    const slug = yield* pathSlug
    const bound = request.cookies[SsoStateCookie]
    const query = Option.getOrElse(yield* Effect.option(HttpServerRequest.schemaSearchParams(CallbackQuery)), () => ({ state: undefined, error: undefined }))
    const refused = (reason: string, options: { readonly inTenant: boolean }) =>
      Effect.andThen(refuseProviderSignIn(slug, reason, options), signInAgain(401, { error: providerRefusal, tenant: slug }))
    const answer = yield* Effect.gen(function*() {
      if (bound === undefined) return yield* refused("no sign-in was begun in this browser, or it began over 10 minutes ago", { inTenant: false })
      if (query.state === undefined || !sameToken(query.state, bound)) return yield* refused("the state is not the one this browser was given", { inTenant: false })
      if (query.error !== undefined) {
        return yield* refused(`provider answered ${OAuthErrorCode.test(query.error) ? query.error : "an error that is no OAuth error code"}`, { inTenant: true })
      }
      // The URL as the browser was sent to it, on the console's public origin: the Host header is the
      // client's to write, and provisioning checks the URL against the redirect URI it registered.
      const received = new URL(request.url, consoleUrl.origin)
      return yield* finishProviderSignIn(slug, query.state, `${consoleUrl.origin}${received.pathname}${received.search}`).pipe(
        Effect.flatMap((signedIn) =>
          redirect(signedIn.mustChooseTenant ? "/console/workspace" : "/console/tokens").pipe(
            // The callback's URL holds the code: not in the next request's Referer.
            HttpServerResponse.setHeader("referrer-policy", "no-referrer"),
            // A new session id at every sign-in: one planted before it is never the member's.
            HttpServerResponse.setCookie(SessionCookie, signedIn.sessionId, cookieOptions(secure, "/console", "lax"))
          )
        ),
        Effect.catchTags({
          ProviderSignInRefused: () => signInAgain(401, { error: providerRefusal, tenant: slug }),
          RemovedMember: () => signInAgain(403, { error: removedMember, tenant: slug }),
          NoSsoConnection: () => signInAgain(404, { error: noProvider, tenant: slug }),
          NoWorkspace: () => signInAgain(403, { error: "Your account is no longer a member of any workspace. Ask a tenant-admin for an invitation." }),
          UpstreamUnavailable: (outage) => providerOutagePage(slug, outage.reason)
        })
      )
    })
    // A state is good for one callback, whatever became of it.
    return answer.pipe(expireCookie(SsoStateCookie, { path: stateCookiePath(slug) }))
  }),

  signOut: signedIn((member) =>
    postedForm(member, Schema.Struct({}), () =>
      Effect.gen(function*() {
        yield* signOut(member)
        return redirect("/console/sign-in").pipe(expireCookie(SessionCookie, { path: "/console" }))
      }))),

  workspaceForm: signedIn((member) => Effect.succeed(workspacePage(member, member.session.csrfToken))),

  chooseWorkspace: signedIn((member) =>
    postedForm(member, Schema.Struct({ tenantId: Schema.String }), (form) =>
      Effect.gen(function*() {
        if (Result.isFailure(form) || !(yield* chooseTenant(member, form.success.tenantId))) return workspacePage(member, member.session.csrfToken)
        return redirect("/console/tokens")
      }))),

  tokens: inWorkspace((member, membership) =>
    Effect.flatMap(Effect.all([noticeOf, requestsCursor]), ([notice, cursor]) => tokensView(member, membership, notice, cursor))),

  requestForm: inWorkspace((member, membership) => Effect.succeed(requestFormPage(200, member, membership, member.session.csrfToken))),

  fileRequest: inWorkspace((member, membership) =>
    postedForm(member, RequestFormSchema, (raw) =>
      Effect.gen(function*() {
        const csrf = member.session.csrfToken
        if (Result.isFailure(raw)) return requestFormPage(400, member, membership, csrf, undefined, "The form could not be read.")
        const valid = decodeRequest(raw.success)
        if (Result.isFailure(valid)) return requestFormPage(400, member, membership, csrf, raw.success, firstMessage(valid.failure))
        return yield* requestToken(member, membership, valid.success).pipe(
          Effect.as(redirect("/console/tokens?notice=requested")),
          Effect.catchTag("Refused", (e) => Effect.succeed(requestFormPage(e.status, member, membership, csrf, raw.success, e.detail)))
        )
      }))),

  revoke: inWorkspace((member, membership) =>
    postedForm(member, Schema.Struct({}), () =>
      Effect.gen(function*() {
        const id = yield* pathId
        if (Option.isNone(id)) return yield* tokensView(member, membership, { error: "There is no such token among yours." })
        return yield* revokeMyToken(member, membership, id.value).pipe(
          Effect.as(redirect("/console/tokens?notice=revoked")),
          Effect.catchTag("Refused", () => tokensView(member, membership, { error: "There is no such token among yours." }))
        )
      }))),

  adminRequests: adminOnly((member, membership) =>
    Effect.flatMap(Effect.all([noticeOf, pendingCursor]), ([notice, cursor]) => adminRequestsView(member, membership, notice, cursor))),

  approve: adminOnly((member, membership) =>
    postedForm(member, Schema.Struct({}), () =>
      Effect.gen(function*() {
        const id = yield* pathId
        const { publicApiUrl } = yield* ConsoleSettings
        const refused = (error: string, status: number) => adminRequestsView(member, membership, { error, status })
        if (Option.isNone(id)) return yield* refused("There is no such request.", 404)
        return yield* approveRequest(member, membership, id.value).pipe(
          Effect.map((approved) =>
            approvedPage(member, membership, member.session.csrfToken, {
              email: approved.request.email,
              token: approved.pat.token,
              scope: approved.pat.scope,
              expiresAt: new Date(approved.pat.expiresAt.epochMilliseconds).toISOString().slice(0, 10),
              apiUrl: publicApiUrl
            })
          ),
          Effect.catchTag("Refused", (e) => refused(e.detail, e.status))
        )
      }))),

  deny: adminOnly((member, membership) =>
    postedForm(member, Schema.Struct({ reason: Schema.String }), (form) =>
      Effect.gen(function*() {
        const id = yield* pathId
        const refused = (error: string, status: number) => adminRequestsView(member, membership, { error, status })
        if (Option.isNone(id)) return yield* refused("There is no such request.", 404)
        const reason = Result.flatMap(form, (f) => Schema.decodeUnknownResult(PatDenialReason)(f.reason))
        if (Result.isFailure(reason)) return yield* refused("Say why the request is denied (1 to 500 characters): its requester reads it.", 400)
        return yield* denyRequest(member, membership, id.value, reason.success).pipe(
          Effect.as(redirect("/console/admin/requests?notice=denied")),
          Effect.catchTag("Refused", (e) => refused(e.detail, e.status))
        )
      }))),

  securityLog: adminOnly((member, membership) =>
    Effect.gen(function*() {
      const events = yield* tenantSecurityLog(membership.tenantId, { limit: 200 })
      return securityLogPage(member, membership, member.session.csrfToken, events)
    }))
}

