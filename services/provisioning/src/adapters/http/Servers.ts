import { HttpApiBuilder } from "@effect/platform"
import { ProvisioningAdminApi } from "@portfolio/domain"
import { AssertionAuthenticationLive, OperatorAuthenticationLive, serveApi } from "@portfolio/platform"
import { type Effect, Layer } from "effect"
import { AcceptancePageLive } from "./AcceptancePage.js"
import { ProvisioningAdminHttpLive } from "./AdminHttp.js"
import { InvitationsHttpLive } from "./InvitationsHttp.js"
import { ProvisioningPublicApi } from "./ProvisioningPublicApi.js"

/** The public port: the `invitations` group as the gateway forwards it, and the magic-link page. */
export const PublicHttpLive = Layer.merge(
  HttpApiBuilder.api(ProvisioningPublicApi).pipe(Layer.provide(InvitationsHttpLive.pipe(Layer.provide(AssertionAuthenticationLive)))),
  AcceptancePageLive
)

export const AdminHttpLive = HttpApiBuilder.api(ProvisioningAdminApi).pipe(
  Layer.provide(ProvisioningAdminHttpLive.pipe(Layer.provide(OperatorAuthenticationLive)))
)

export const servers = <E, R>(ready: Effect.Effect<unknown, E, R>) => [
  // The magic-link page's path is its secret token: no span, so that it is never exported as url.path.
  serveApi({ apiLayer: PublicHttpLive, ready, service: "provisioning", server: "api", untraced: (path) => path.startsWith("/accept/") }),
  serveApi({ apiLayer: AdminHttpLive, ready, service: "provisioning", server: "admin" })
] as const
