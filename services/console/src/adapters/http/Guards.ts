import { HttpIncomingMessage, HttpServerRequest, HttpServerResponse } from "effect/http"
import { requestOrigin } from "@portfolio/platform/http"
import { type SecurityLog } from "@portfolio/platform/security"
import { ByteSize, Effect, type Result, Option, Schema } from "effect"
import { ConsoleSettings } from "../../Config.js"
import type { DirectoryDesk, Membership } from "../../ports/DirectoryDesk.js"
import type { SessionRepository } from "../../ports/SessionRepository.js"
import type { SignInAttempts } from "../../ports/SignInAttempts.js"
import type { TokenDesk } from "../../ports/TokenDesk.js"
import type { MemberDesk } from "../../ports/MemberDesk.js"
import type { GatewayLogDesk } from "../../ports/GatewayLogDesk.js"
import type { PartnerDesk } from "../../ports/PartnerDesk.js"
import type { ScimTokenDesk } from "../../ports/ScimTokenDesk.js"
import type { SsoDesk } from "../../ports/SsoDesk.js"
import type { WebhookDesk } from "../../ports/WebhookDesk.js"
import { LockoutNotices } from "../../usecases/LockoutNotices.js"
import { CurrentOrigin } from "../../usecases/Requests.js"
import { currentMember, formTokenValid, type Member, refuseForgedForm } from "../../usecases/SignIn.js"
import { messagePage } from "./Pages.js"

export const SessionCookie = "console_session"
/** The sign-in form's own CSRF token, before any session exists (a double-submitted cookie). */
export const SignInCookie = "console_sign_in"
/**
 * The state of a sign-in through the tenant's provider, binding it to the browser that began it
 * (a callback without it is someone else's sign-in, or a login forged into this browser).
 */
export const SsoStateCookie = "console_sso"

// Forms of a few fields; a justification of 2,000 characters, URL-encoded, fits well within this.
const FormMaxBytes = 16 * 1024

export type Services = ConsoleSettings | DirectoryDesk | SessionRepository | SignInAttempts | TokenDesk | WebhookDesk | MemberDesk | PartnerDesk | ScimTokenDesk | SsoDesk | GatewayLogDesk | SecurityLog | LockoutNotices

export const redirect = (location: string) => HttpServerResponse.empty({ status: 303, headers: { location, "cache-control": "no-store" } })

export const cookieOptions = (secure: boolean, path: string, sameSite: "lax" | "strict") => ({ httpOnly: true, secure, sameSite, path })

/**
 * A cookie removed: empty, with `Max-Age=0` and no `Expires` (Effect 4's `expireCookie` adds one),
 * so that the Set-Cookie line stays as it always was.
 */
export const expireCookie = (name: string, options: { readonly path: string }) => (response: HttpServerResponse.HttpServerResponse) =>
  HttpServerResponse.setCookieUnsafe(response, name, "", { ...options, maxAge: 0 })

export const withOrigin = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const { trustedProxyHops } = yield* ConsoleSettings
    return yield* Effect.provideService(effect, CurrentOrigin, requestOrigin(request, trustedProxyHops))
  })

/**
 * Whether a form comes from the console's own pages by what the browser says of its origin: a
 * browser names it on every cross-site post. Absent both headers (not a browser), the form's
 * token alone decides.
 */
export const sameOrigin = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const { consoleUrl } = yield* ConsoleSettings
  const origin = request.headers["origin"]
  if (origin !== undefined) return origin === consoleUrl.origin
  const referer = request.headers["referer"]
  if (referer !== undefined) return URL.canParse(referer) && new URL(referer).origin === consoleUrl.origin
  return true
})

export const readForm = <A, I extends Readonly<Record<string, string | ReadonlyArray<string> | undefined>>>(schema: Schema.Codec<A, I>) =>
  HttpServerRequest.schemaBodyUrlParams(Schema.Struct({ csrf: Schema.optional(Schema.String) })).pipe(
    Effect.zip(HttpServerRequest.schemaBodyUrlParams(schema).pipe(Effect.result)),
    Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(FormMaxBytes)),
    Effect.option
  )

export const outagePage = (who?: { readonly member: Member; readonly membership?: Membership; readonly csrf: string }) =>
  messagePage(503, "Please try again later", "A service the console relies on is not answering. Nothing was changed.", who).pipe(
    HttpServerResponse.setHeader("retry-after", "30")
  )

export const forgedFormPage = () =>
  messagePage(403, "This form cannot be accepted", "The form was not sent from this console's page, or the page is too old. Nothing was changed: open the page again and repeat.")

// ---------------------------------------------------------------------------------------------
// Signed-in pages: the member is re-read on every request (usecases/SignIn.ts currentMember).

export const sessionIdOf = Effect.map(HttpServerRequest.HttpServerRequest, (request) => Option.fromNullishOr(request.cookies[SessionCookie]))

export const signedIn = <E, R>(page: (member: Member) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.gen(function*() {
    const sessionId = yield* sessionIdOf
    if (Option.isNone(sessionId)) return redirect("/console/sign-in")
    const member = yield* currentMember(sessionId.value)
    if (Option.isNone(member)) return redirect("/console/sign-in").pipe(expireCookie(SessionCookie, { path: "/console" }))
    return yield* page(member.value)
  })

export const inWorkspace = <E, R>(page: (member: Member, membership: Membership) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  signedIn((member) => Option.match(member.membership, { onNone: () => Effect.succeed(redirect("/console/workspace")), onSome: (m) => page(member, m) }))

/** Pages of tenant-admins: anyone else gets the 403 page, and nothing of the page's content. */
export const adminOnly = <E, R>(page: (member: Member, membership: Membership) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
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
export const postedForm = <A, I extends Readonly<Record<string, string | ReadonlyArray<string> | undefined>>, E, R>(
  member: Member,
  schema: Schema.Codec<A, I>,
  handle: (form: Result.Result<A, unknown>) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
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


/**
 * The notice a redirect after a form asked for (`?notice=<key>`), as `{ notice }` to spread into a
 * page's view: only the page's own texts, never words from the URL.
 */
export const noticeFrom = <K extends string>(notices: Readonly<Record<K, string>>) => {
  const Query = Schema.Struct({ notice: Schema.optional(Schema.Literals(Object.keys(notices) as Array<K>)) })
  return Effect.map(Effect.option(HttpServerRequest.schemaSearchParams(Query)), (query): { readonly notice?: string } =>
    Option.match(Option.flatMap(query, (q) => Option.fromNullishOr(q.notice)), { onNone: () => ({}), onSome: (key) => ({ notice: notices[key] }) }))
}
