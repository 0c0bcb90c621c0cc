import { HttpApiBuilder, HttpIncomingMessage, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { PatDenialReason, PatJustification, PatMaxDays, Scope } from "@portfolio/domain"
import { Effect, Either, Option, ParseResult, Redacted, Schema } from "effect"
import { ConsoleSettings } from "../../Config.js"
import { newSecret, sameToken } from "../../domain/SessionRules.js"
import { minutesToWait } from "../../domain/SignInRules.js"
import { type Directory, type Membership, UpstreamUnavailable } from "../../ports/Directory.js"
import { SecurityLog, type SecurityLog as SecurityLogTag } from "../../ports/SecurityLog.js"
import type { SessionStore } from "../../ports/SessionStore.js"
import type { SignInAttempts } from "../../ports/SignInAttempts.js"
import type { TokenDesk } from "../../ports/TokenDesk.js"
import { CurrentOrigin } from "../../usecases/Requests.js"
import { chooseTenant, currentMember, formTokenValid, type Member, refuseForgedForm, signIn, signOut } from "../../usecases/SignIn.js"
import { approveRequest, denyRequest, myTokens, requestToken, revokeMyToken, tenantRequests } from "../../usecases/Tokens.js"
import {
  adminRequestsPage,
  approvedPage,
  consoleScript,
  messagePage,
  requestFormPage,
  securityLogPage,
  signInPage,
  tokensPage,
  workspacePage
} from "./Pages.js"

export const SessionCookie = "console_session"
/** The sign-in form's own CSRF token, before any session exists (a double-submitted cookie). */
export const SignInCookie = "console_sign_in"

// Forms of a few fields; a justification of 2,000 characters, URL-encoded, fits well within this.
const FormMaxBytes = 16 * 1024

type Services = ConsoleSettings | Directory | SessionStore | SignInAttempts | TokenDesk | SecurityLogTag

const redirect = (location: string) => HttpServerResponse.empty({ status: 303, headers: { location, "cache-control": "no-store" } })

const cookieOptions = (secure: boolean, path: string, sameSite: "lax" | "strict") => ({ httpOnly: true, secure, sameSite, path })

/** The client's address: the socket's peer, or behind `hops` trusted proxies the entry they appended. */
const clientAddressOf = (request: HttpServerRequest.HttpServerRequest, hops: number) => {
  const peer = Option.getOrElse(request.remoteAddress, () => "unknown")
  if (hops === 0) return peer
  const forwarded = (request.headers["x-forwarded-for"] ?? "").split(",").map((s) => s.trim()).filter((s) => s.length > 0)
  return forwarded[forwarded.length - hops] ?? peer
}

const withOrigin = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const { trustedProxyHops } = yield* ConsoleSettings
    return yield* Effect.provideService(effect, CurrentOrigin, {
      ip: clientAddressOf(request, trustedProxyHops),
      userAgent: (request.headers["user-agent"] ?? "").slice(0, 300)
    })
  })

/**
 * Whether a form comes from the console's own pages by what the browser says of its origin: a
 * browser names it on every cross-site post. Absent both headers (not a browser), the form's
 * token alone decides.
 */
const sameOrigin = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const { consoleUrl } = yield* ConsoleSettings
  const origin = request.headers["origin"]
  if (origin !== undefined) return origin === consoleUrl.origin
  const referer = request.headers["referer"]
  if (referer !== undefined) return URL.canParse(referer) && new URL(referer).origin === consoleUrl.origin
  return true
})

const readForm = <A, I extends Readonly<Record<string, string | undefined>>>(schema: Schema.Schema<A, I>) =>
  HttpServerRequest.schemaBodyUrlParams(Schema.Struct({ csrf: Schema.optional(Schema.String) })).pipe(
    Effect.zip(HttpServerRequest.schemaBodyUrlParams(schema as unknown as Schema.Schema<A, Readonly<Record<string, string | undefined>>>).pipe(Effect.either)),
    HttpIncomingMessage.withMaxBodySize(Option.some(FormMaxBytes)),
    Effect.option
  )

const outagePage = (who?: { readonly member: Member; readonly membership?: Membership; readonly csrf: string }) =>
  messagePage(503, "Please try again later", "A service the console relies on is not answering. Nothing was changed.", who).pipe(
    HttpServerResponse.setHeader("retry-after", "30")
  )

const forgedFormPage = () =>
  messagePage(403, "This form cannot be accepted", "The form was not sent from this console's page, or the page is too old. Nothing was changed: open the page again and repeat.")

// ---------------------------------------------------------------------------------------------
// Signed-in pages: the member is re-read on every request (usecases/SignIn.ts currentMember).

const sessionIdOf = Effect.map(HttpServerRequest.HttpServerRequest, (request) => Option.fromNullable(request.cookies[SessionCookie]))

const signedIn = <E, R>(page: (member: Member) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.gen(function*() {
    const sessionId = yield* sessionIdOf
    if (Option.isNone(sessionId)) return redirect("/console/sign-in")
    const member = yield* currentMember(sessionId.value)
    if (Option.isNone(member)) return yield* redirect("/console/sign-in").pipe(HttpServerResponse.expireCookie(SessionCookie, { path: "/console" }))
    return yield* page(member.value)
  })

const inWorkspace = <E, R>(page: (member: Member, membership: Membership) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  signedIn((member) => Option.match(member.membership, { onNone: () => Effect.succeed(redirect("/console/workspace")), onSome: (m) => page(member, m) }))

/** Pages of tenant-admins: anyone else gets the 403 page, and nothing of the page's content. */
const adminOnly = <E, R>(page: (member: Member, membership: Membership) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  inWorkspace((member, membership) =>
    membership.role === "tenant-admin"
      ? page(member, membership)
      : Effect.succeed(
        messagePage(403, "Tenant-admins only", `This page is for the tenant-admins of ${membership.tenantSlug}; you are ${membership.role}.`, {
          member,
          membership,
          csrf: member.session.csrfToken
        })
      ))

/** A signed-in form: its origin and token are checked before anything is read or changed. */
const postedForm = <A, I extends Readonly<Record<string, string | undefined>>, E, R>(
  member: Member,
  schema: Schema.Schema<A, I>,
  handle: (form: Either.Either<A, unknown>) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const form = yield* readForm(schema)
    if (!(yield* sameOrigin) || Option.isNone(form) || !formTokenValid(member, form.value[0].csrf)) {
      yield* refuseForgedForm(member, new URL(request.url, "http://console.invalid").pathname)
      return forgedFormPage()
    }
    return yield* handle(form.value[1])
  })

const NoticeQuery = Schema.Struct({ notice: Schema.optional(Schema.Literal("requested", "revoked", "denied")) })
const notices = { requested: "Your request is filed. A tenant-admin will decide it.", revoked: "The token is revoked: it no longer works.", denied: "The request is denied; its requester sees your reason." } as const
const noticeOf = Effect.map(HttpServerRequest.schemaSearchParams(NoticeQuery).pipe(Effect.option), (q) =>
  Option.match(Option.flatMap(q, (v) => Option.fromNullable(v.notice)), { onNone: () => undefined, onSome: (n) => notices[n] }))

const IdPath = Schema.Struct({ id: Schema.UUID })
const pathId = Effect.map(HttpRouter.schemaPathParams(IdPath).pipe(Effect.option), Option.map((p) => p.id))

const RequestFormSchema = Schema.Struct({ scope: Schema.String, days: Schema.String, justification: Schema.String })
const ValidRequest = Schema.Struct({
  scope: Scope,
  days: Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, PatMaxDays, { message: () => `the lifetime must be 1 to ${PatMaxDays} days` })),
  justification: PatJustification
})
const firstMessage = (error: ParseResult.ParseError) => ParseResult.ArrayFormatter.formatErrorSync(error)[0]?.message ?? "The form could not be read."

const tokensView = (member: Member, membership: Membership, extra: { readonly notice?: string; readonly error?: string } = {}) =>
  Effect.map(myTokens(member, membership), (view) => tokensPage(member, membership, member.session.csrfToken, { ...view, ...extra }))

const routes = {
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

  tokens: inWorkspace((member, membership) => Effect.flatMap(noticeOf, (notice) => tokensView(member, membership, notice === undefined ? {} : { notice }))),

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
    Effect.gen(function*() {
      const notice = yield* noticeOf
      const pending = yield* tenantRequests(member, membership, "pending")
      return adminRequestsPage(member, membership, member.session.csrfToken, { pending, ...(notice === undefined ? {} : { notice }) })
    })),

  approve: adminOnly((member, membership) =>
    postedForm(member, Schema.Struct({}), () =>
      Effect.gen(function*() {
        const id = yield* pathId
        const { publicApiUrl } = yield* ConsoleSettings
        const refused = (error: string, status: number) =>
          Effect.map(tenantRequests(member, membership, "pending"), (pending) =>
            adminRequestsPage(member, membership, member.session.csrfToken, { pending, error, status }))
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
        const refused = (error: string, status: number) =>
          Effect.map(tenantRequests(member, membership, "pending"), (pending) =>
            adminRequestsPage(member, membership, member.session.csrfToken, { pending, error, status }))
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
      const events = yield* (yield* SecurityLog).list(membership.tenantId, { limit: 200 })
      return securityLogPage(member, membership, member.session.csrfToken, events)
    })),

  script: HttpServerResponse.text(consoleScript, {
    contentType: "text/javascript; charset=utf-8",
    headers: { "cache-control": "public, max-age=300", "x-content-type-options": "nosniff" }
  }),

  notFound: messagePage(404, "Page not found", "There is no such page in the console.")
}

/** An outage of a service behind a page is a page saying so, never a stack trace. */
const page = <E, R>(effect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  withOrigin(effect).pipe(
    Effect.catchAll((error) =>
      error instanceof UpstreamUnavailable
        ? Effect.zipRight(Effect.logWarning("a service behind the console did not answer", { reason: error.reason }), Effect.succeed(outagePage()))
        : Effect.fail(error)
    )
  )

/** The console's pages under `/console`, plain HTML forms (docs/console.md). */
export const ConsolePagesLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const context = yield* Effect.context<Services>()
    const add = <E, R extends Services | CurrentOrigin | HttpServerRequest.HttpServerRequest | HttpRouter.RouteContext | HttpServerRequest.ParsedSearchParams>(
      method: "GET" | "POST",
      path: HttpRouter.PathInput,
      handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
    ) => (method === "GET" ? router.get : router.post)(path, Effect.provide(page(handler), context))
    yield* add("GET", "/console", routes.root)
    yield* add("GET", "/console/sign-in", routes.signInForm)
    yield* add("POST", "/console/sign-in", routes.signIn)
    yield* add("POST", "/console/sign-out", routes.signOut)
    yield* add("GET", "/console/workspace", routes.workspaceForm)
    yield* add("POST", "/console/workspace", routes.chooseWorkspace)
    yield* add("GET", "/console/tokens", routes.tokens)
    yield* add("GET", "/console/tokens/new", routes.requestForm)
    yield* add("POST", "/console/tokens/new", routes.fileRequest)
    yield* add("POST", "/console/tokens/:id/revoke", routes.revoke)
    yield* add("GET", "/console/admin/requests", routes.adminRequests)
    yield* add("POST", "/console/admin/requests/:id/approve", routes.approve)
    yield* add("POST", "/console/admin/requests/:id/deny", routes.deny)
    yield* add("GET", "/console/admin/security", routes.securityLog)
    yield* router.get("/console/assets/console.js", Effect.succeed(routes.script))
    yield* router.get("/console/*", Effect.succeed(routes.notFound))
  })
)

/** The route templates of the pages, for the requests' record (metrics, logs). */
export const consoleRoute = (path: string): string | undefined => {
  if (!path.startsWith("/console")) return undefined
  return path.replace(/\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?=\/|$)/gi, "/{id}")
}
