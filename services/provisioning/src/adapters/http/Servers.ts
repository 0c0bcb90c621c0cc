import { HttpApi, HttpApiBuilder } from "effect/http-api"
import { ProvisioningAdminApi, ScimGroup } from "@portfolio/domain"
import { serveApi } from "@portfolio/platform/http"
import { AssertionAuthenticationLive, OperatorAuthenticationLive } from "@portfolio/platform/security"
import { type Effect, Layer } from "effect"
import { AcceptancePageLive } from "./AcceptancePage.js"
import { AdminHandlersLive } from "./AdminHandlers.js"
import { PublicHandlersLive } from "./PublicHandlers.js"
import { ProvisioningPublicApi } from "./ProvisioningPublicApi.js"
import { ScimHttpLive } from "./ScimHttp.js"

/**
 * The public port: the `invitations` group as the gateway forwards it, the `scim` group beside it
 * (ScimHttp.ts says why), and the magic-link page.
 */
export const PublicHttpLive = Layer.mergeAll(
  HttpApiBuilder.layer(ProvisioningPublicApi).pipe(Layer.provide(PublicHandlersLive.pipe(Layer.provide(AssertionAuthenticationLive)))),
  ScimHttpLive,
  AcceptancePageLive
)

export const AdminHttpLive = HttpApiBuilder.layer(ProvisioningAdminApi).pipe(
  Layer.provide(AdminHandlersLive.pipe(Layer.provide(OperatorAuthenticationLive)))
)

/** The magic-link page's route: its path is its secret token, which only the template may stand for. */
const acceptanceRoute = (path: string) => (/^\/accept\/[^/]+$/.test(path) ? "/accept/{token}" : undefined)

/** The SCIM routes, served by ScimHttp.ts's router: named in spans and records as the API's are. */
const ScimRoutes = HttpApi.make("scim").add(ScimGroup)

export const servers = <E, R>(ready: Effect.Effect<unknown, E, R>) => [
  // No span for the magic-link page, so that its token is never exported as url.path.
  serveApi({
    api: ProvisioningPublicApi,
    apiLayer: PublicHttpLive,
    ready,
    service: "provisioning",
    server: "api",
    untraced: (path) => path.startsWith("/accept/"),
    routeOutsideApi: acceptanceRoute,
    servedOutsideApi: ScimRoutes
  }),
  serveApi({ api: ProvisioningAdminApi, apiLayer: AdminHttpLive, ready, service: "provisioning", server: "admin" })
] as const
