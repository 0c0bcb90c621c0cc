import { HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { isControlCharacter, PageCursorMaxLength, PatDenialReason, PatJustification, PatMaxDays, Scope } from "@portfolio/domain"
import { Effect, Either, Option, ParseResult, Redacted, Schema } from "effect"
import { ConsoleSettings } from "../../Config.js"
import { newSecret, sameToken } from "../../domain/SessionRules.js"
import { minutesToWait } from "../../domain/SignInRules.js"
import type { Membership, UpstreamUnavailable } from "../../ports/DirectoryDesk.js"
import type { TokenDesk } from "../../ports/TokenDesk.js"
import { tenantSecurityLog } from "../../usecases/SecurityLog.js"
import { chooseTenant, type Member, signIn, signOut } from "../../usecases/SignIn.js"
import { approveRequest, denyRequest, myTokens, requestToken, revokeMyToken, tenantRequests } from "../../usecases/Tokens.js"
import { adminOnly, cookieOptions, inWorkspace, noticeFrom, postedForm, readForm, redirect, sameOrigin, SessionCookie, signedIn, SignInCookie } from "./Guards.js"
import {
  adminRequestsPage,
  approvedPage,
  requestFormPage,
  securityLogPage,
  signInPage,
  tokensPage,
  workspacePage
} from "./Pages.js"

const notices = { requested: "Your request is filed. A tenant-admin will decide it.", revoked: "The token is revoked: it no longer works.", denied: "The request is denied; its requester sees your reason." } as const
const noticeOf = noticeFrom(notices)

export const IdPath = Schema.Struct({ id: Schema.UUID })
export const pathId = Effect.map(HttpRouter.schemaPathParams(IdPath).pipe(Effect.option), Option.map((p) => p.id))

const RequestFormSchema = Schema.Struct({ scope: Schema.String, days: Schema.String, justification: Schema.String })
const ValidRequest = Schema.Struct({
  scope: Scope,
  days: Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, PatMaxDays, { message: () => `the lifetime must be 1 to ${PatMaxDays} days` })),
  justification: PatJustification
})
export const firstMessage = (error: ParseResult.ParseError) => ParseResult.ArrayFormatter.formatErrorSync(error)[0]?.message ?? "The form could not be read."

/** The gateway's cursor a page's "Older requests" link carries in the query parameter `name`; none without it (the newest page). */
const cursorParam = (name: string) =>
  Effect.map(
    Effect.option(HttpServerRequest.schemaSearchParams(Schema.Struct({ [name]: Schema.optional(Schema.String.pipe(Schema.maxLength(PageCursorMaxLength))) }))),
    (query) => Option.getOrUndefined(Option.flatMap(query, (q) => Option.fromNullable(q[name])))
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

export const routes = {
  root: signedIn(() => Effect.succeed(redirect("/console/tokens"))),

  signInForm: Effect.gen(function*() {
    const { consoleUrl } = yield* ConsoleSettings
    const token = newSecret()
    return yield* signInPage(200, { csrf: token }).pipe(
      HttpServerResponse.setCookie(SignInCookie, token, cookieOptions(consoleUrl.protocol === "https:", "/console/sign-in", "strict"))
    )
  }),

  signIn: Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const { consoleUrl } = yield* ConsoleSettings
    const secure = consoleUrl.protocol === "https:"
    const form = yield* readForm(Schema.Struct({ email: Schema.String, password: Schema.String }))
    const cookieToken = request.cookies[SignInCookie]
    const fresh = newSecret()
    const again = (status: number, error: string, email?: string) =>
      signInPage(status, { csrf: fresh, error, ...(email === undefined ? {} : { email }) }).pipe(
        HttpServerResponse.setCookie(SignInCookie, fresh, cookieOptions(secure, "/console/sign-in", "strict"))
      )
    if (!(yield* sameOrigin) || Option.isNone(form) || cookieToken === undefined || !sameToken(form.value[0].csrf, cookieToken)) {
      return yield* again(403, "The form was not sent from this page, or it is too old. Please sign in again.")
    }
    if (Either.isLeft(form.value[1])) return yield* again(400, "Please give your e-mail and password.")
    const { email, password } = form.value[1].right
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
          Effect.flatMap(HttpServerResponse.expireCookie(SignInCookie, { path: "/console/sign-in" }))
        )
      ),
      Effect.catchTags({
        InvalidCredentials: () => again(401, "The e-mail or the password is not right.", email),
        LockedOut: (e) => again(429, `Too many failed attempts. Try again in ${minutesToWait(e.retryAfterMs)} minutes.`, email),
        NoWorkspace: () => again(403, "Your account is no longer a member of any workspace. Ask a tenant-admin for an invitation.", email),
        UpstreamUnavailable: () => again(503, "We cannot sign you in right now. Please try again in a moment.", email)
      })
    )
  }),

  signOut: signedIn((member) =>
    postedForm(member, Schema.Struct({}), () =>
      Effect.gen(function*() {
        yield* signOut(member)
        return yield* redirect("/console/sign-in").pipe(HttpServerResponse.expireCookie(SessionCookie, { path: "/console" }))
      }))),

  workspaceForm: signedIn((member) => Effect.succeed(workspacePage(member, member.session.csrfToken))),

  chooseWorkspace: signedIn((member) =>
    postedForm(member, Schema.Struct({ tenantId: Schema.String }), (form) =>
      Effect.gen(function*() {
        if (Either.isLeft(form) || !(yield* chooseTenant(member, form.right.tenantId))) return workspacePage(member, member.session.csrfToken)
        return redirect("/console/tokens")
      }))),

  tokens: inWorkspace((member, membership) =>
    Effect.flatMap(Effect.all([noticeOf, requestsCursor]), ([notice, cursor]) => tokensView(member, membership, notice, cursor))),

  requestForm: inWorkspace((member, membership) => Effect.succeed(requestFormPage(200, member, membership, member.session.csrfToken))),

  fileRequest: inWorkspace((member, membership) =>
    postedForm(member, RequestFormSchema, (raw) =>
      Effect.gen(function*() {
        const csrf = member.session.csrfToken
        if (Either.isLeft(raw)) return requestFormPage(400, member, membership, csrf, undefined, "The form could not be read.")
        const valid = Schema.decodeUnknownEither(ValidRequest)(raw.right)
        if (Either.isLeft(valid)) return requestFormPage(400, member, membership, csrf, raw.right, firstMessage(valid.left))
        return yield* requestToken(member, membership, valid.right).pipe(
          Effect.as(redirect("/console/tokens?notice=requested")),
          Effect.catchTag("Refused", (e) => Effect.succeed(requestFormPage(e.status, member, membership, csrf, raw.right, e.detail)))
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
              expiresAt: new Date(approved.pat.expiresAt.epochMillis).toISOString().slice(0, 10),
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
        const reason = Either.flatMap(form, (f) => Schema.decodeUnknownEither(PatDenialReason)(f.reason))
        if (Either.isLeft(reason)) return yield* refused("Say why the request is denied (1 to 500 characters): its requester reads it.", 400)
        return yield* denyRequest(member, membership, id.value, reason.right).pipe(
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

