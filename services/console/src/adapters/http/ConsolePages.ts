import { HttpRouter, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { PartnerClientId, TenantSlug, UserSub, Uuid } from "@portfolio/domain"
import { Effect, Schema } from "effect"
import { UpstreamUnavailable } from "../../ports/DirectoryDesk.js"
import type { CurrentOrigin } from "../../usecases/Requests.js"
import { outagePage, type Services, withOrigin } from "./Guards.js"
import { consoleScript, messagePage } from "./Pages.js"
import { memberRoutes } from "./MemberRoutes.js"
import { partnerRoutes } from "./PartnerRoutes.js"
import { routes } from "./Routes.js"
import { scimRoutes } from "./ScimRoutes.js"
import { ssoRoutes } from "./SsoRoutes.js"
import { webhookRoutes } from "./WebhookRoutes.js"

const consoleScriptResponse = HttpServerResponse.text(consoleScript, {
  contentType: "text/javascript; charset=utf-8",
  headers: { "cache-control": "public, max-age=300", "x-content-type-options": "nosniff" }
})

const notFoundPage = messagePage(404, "Page not found", "There is no such page in the console.")

/**
 * What each path parameter of the pages is: the id the admin API it is passed to takes (docs/console.md).
 * Any other value decoded from the path (a `/`, a dot segment, a control character, a `?` where a
 * UUID belongs) is no page of the console: the 404 page, before any session is read or any service
 * called. A route whose parameter has no kind here fails the start.
 */
const PathParameters: Readonly<Record<string, Schema.Codec<string>>> = {
  id: Uuid,
  deliveryId: Uuid,
  clientId: PartnerClientId,
  userSub: UserSub,
  slug: TenantSlug
}

/** The handler of a route whose path parameters are all of their kind; the 404 page otherwise. */
const withPathParameters = <E, R>(path: string, handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) => {
  const names = [...path.matchAll(/:(\w+)/g)].map((match) => match[1]!)
  if (names.length === 0) return handler
  const unknown = names.filter((name) => PathParameters[name] === undefined)
  if (unknown.length > 0) throw new Error(`no kind of id is declared for the path parameter(s) ${unknown.join(", ")} of ${path}`)
  const valid = Schema.is(Schema.Struct(Object.fromEntries(names.map((name) => [name, PathParameters[name]!]))))
  return Effect.flatMap(HttpRouter.params, (params) => (valid(params) ? handler : Effect.succeed(notFoundPage)))
}

/** An outage of a service behind a page is a page saying so, never a stack trace. */
const page = <E, R>(effect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  withOrigin(effect).pipe(
    Effect.catch((error) =>
      error instanceof UpstreamUnavailable
        ? Effect.andThen(Effect.logWarning("a service behind the console did not answer", { reason: error.reason }), Effect.succeed(outagePage()))
        : Effect.fail(error)
    )
  )

/** The console's pages under `/console`, plain HTML forms (docs/console.md). */
export const ConsolePagesLive = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const context = yield* Effect.context<Services>()
    const add = <E, R extends Services | CurrentOrigin | HttpServerRequest.HttpServerRequest | HttpRouter.RouteContext | HttpServerRequest.ParsedSearchParams>(
      method: "GET" | "POST",
      path: HttpRouter.PathInput,
      handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
    ) => router.add(method, path, Effect.provide(page(withPathParameters(path, handler)), context))
    yield* add("GET", "/console/sign-in", routes.signInForm)
    yield* add("POST", "/console/sign-in", routes.signIn)
    yield* add("GET", "/console/sso", routes.providerSignInForm)
    yield* add("GET", "/console/sso/:slug", routes.beginProviderSignIn)
    yield* add("GET", "/console/sso/:slug/callback", routes.finishProviderSignIn)
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
    yield* add("GET", "/console/admin/members", memberRoutes.list)
    yield* add("POST", "/console/admin/members/invite", memberRoutes.invite)
    yield* add("POST", "/console/admin/invitations/:id/revoke", memberRoutes.revokeInvitation)
    yield* add("POST", "/console/admin/members/:userSub/remove", memberRoutes.removeMember)
    yield* add("GET", "/console/admin/partners", partnerRoutes.list)
    yield* add("POST", "/console/admin/partners/new", partnerRoutes.create)
    yield* add("POST", "/console/admin/partners/:clientId/rotate-secret", partnerRoutes.rotate)
    yield* add("POST", "/console/admin/partners/:clientId/enable", partnerRoutes.enable)
    yield* add("POST", "/console/admin/partners/:clientId/disable", partnerRoutes.disable)
    yield* add("GET", "/console/admin/scim", scimRoutes.list)
    yield* add("POST", "/console/admin/scim/new", scimRoutes.create)
    yield* add("POST", "/console/admin/scim/:id/revoke", scimRoutes.revoke)
    yield* add("GET", "/console/admin/sso", ssoRoutes.show)
    yield* add("POST", "/console/admin/sso", ssoRoutes.save)
    yield* add("POST", "/console/admin/sso/disable", ssoRoutes.disable)
    yield* add("GET", "/console/admin/webhooks", webhookRoutes.list)
    yield* add("GET", "/console/admin/webhooks/new", webhookRoutes.newForm)
    yield* add("POST", "/console/admin/webhooks/new", webhookRoutes.create)
    yield* add("GET", "/console/admin/webhooks/:id", webhookRoutes.show)
    yield* add("POST", "/console/admin/webhooks/:id", webhookRoutes.update)
    yield* add("POST", "/console/admin/webhooks/:id/enable", webhookRoutes.enable)
    yield* add("POST", "/console/admin/webhooks/:id/disable", webhookRoutes.disable)
    yield* add("POST", "/console/admin/webhooks/:id/rotate-secret", webhookRoutes.rotate)
    yield* add("POST", "/console/admin/webhooks/:id/recover", webhookRoutes.recover)
    yield* add("GET", "/console/admin/webhooks/:id/deliveries/:deliveryId", webhookRoutes.attempts)
    yield* add("POST", "/console/admin/webhooks/:id/deliveries/:deliveryId/redeliver", webhookRoutes.redeliver)
    yield* router.add("GET", "/console/assets/console.js", consoleScriptResponse)
    // Effect 4's router answers `/console` itself with the route `/console/*` (without its `*`
    // parameter): the root page; any other page not declared above is the 404 page.
    yield* add("GET", "/console/*", Effect.flatMap(HttpRouter.params, (params) => (params["*"] === undefined ? routes.root : Effect.succeed(notFoundPage))))
  })
)

const UuidPattern = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"

/** The pages' templates; `{id}` stands for a UUID, `{userSub}` for one path segment, `{slug}` for a tenant's slug. */
const templates: ReadonlyArray<readonly [RegExp, string]> = [
  "/console",
  "/console/sign-in",
  "/console/sign-out",
  "/console/sso",
  "/console/sso/{slug}",
  "/console/sso/{slug}/callback",
  "/console/workspace",
  "/console/tokens",
  "/console/tokens/new",
  "/console/tokens/{id}/revoke",
  "/console/admin/requests",
  "/console/admin/requests/{id}/approve",
  "/console/admin/requests/{id}/deny",
  "/console/admin/security",
  "/console/admin/members",
  "/console/admin/members/invite",
  "/console/admin/invitations/{id}/revoke",
  "/console/admin/members/{userSub}/remove",
  "/console/admin/partners",
  "/console/admin/partners/new",
  "/console/admin/partners/{clientId}/rotate-secret",
  "/console/admin/partners/{clientId}/enable",
  "/console/admin/partners/{clientId}/disable",
  "/console/admin/scim",
  "/console/admin/scim/new",
  "/console/admin/scim/{id}/revoke",
  "/console/admin/sso",
  "/console/admin/sso/disable",
  "/console/admin/webhooks",
  "/console/admin/webhooks/new",
  "/console/admin/webhooks/{id}",
  "/console/admin/webhooks/{id}/enable",
  "/console/admin/webhooks/{id}/disable",
  "/console/admin/webhooks/{id}/rotate-secret",
  "/console/admin/webhooks/{id}/recover",
  "/console/admin/webhooks/{id}/deliveries/{deliveryId}",
  "/console/admin/webhooks/{id}/deliveries/{deliveryId}/redeliver",
  "/console/assets/console.js"
].map((template) => [
  new RegExp(`^${template.replaceAll("{id}", UuidPattern).replaceAll("{deliveryId}", UuidPattern).replaceAll("{userSub}", "[^/]+").replaceAll("{clientId}", "service-partner-[a-z0-9-]{1,50}").replaceAll("{slug}", "[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?")}/?$`),
  template
] as const)

/**
 * The route template of a page, for the requests' record (metrics, logs): only the console's own
 * templates, so that a scanner's paths cannot make a metric series each (anything else is
 * `/console/*`, the 404 page).
 */
export const consoleRoute = (path: string): string | undefined => {
  if (path !== "/console" && !path.startsWith("/console/")) return undefined
  return templates.find(([pattern]) => pattern.test(path))?.[1] ?? "/console/*"
}
