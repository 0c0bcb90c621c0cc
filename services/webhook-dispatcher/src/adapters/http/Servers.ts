import { HttpApiBuilder } from "effect/http-api"
import { WebhookAdminApi } from "@portfolio/domain"
import { serveApi } from "@portfolio/platform/http"
import { OperatorAuthenticationLive } from "@portfolio/platform/security"
import { type Effect, Layer } from "effect"
import { AdminHandlersLive } from "./AdminHandlers.js"

export const AdminHttpLive = HttpApiBuilder.layer(WebhookAdminApi).pipe(
  Layer.provide(AdminHandlersLive.pipe(Layer.provide(OperatorAuthenticationLive)))
)

/** The dispatcher's one port: its admin API and probes; it answers nothing public. */
export const servers = <E, R>(ready: Effect.Effect<unknown, E, R>) => [
  serveApi({ api: WebhookAdminApi, apiLayer: AdminHttpLive, ready, service: "webhook-dispatcher", server: "admin" })
] as const
