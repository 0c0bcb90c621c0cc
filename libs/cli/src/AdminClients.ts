import { ConsoleAdminApi, GatewayAdminApi, ProvisioningAdminApi, ReferentialAdminApi, WebhookAdminApi } from "@portfolio/domain"
import { Context, Effect, Layer, Redacted } from "effect"
import { OperatorSettings } from "./OperatorSettings.js"
import { operatorApiClient } from "@portfolio/platform/security"

const make = Effect.gen(function*() {
  const config = yield* OperatorSettings
  const signed = (baseUrl: string) => ({ baseUrl, secret: Redacted.value(config.secret), operator: config.operator })
  return {
    gateway: yield* operatorApiClient(GatewayAdminApi)(signed(config.gatewayAdminUrl)),
    provisioning: yield* operatorApiClient(ProvisioningAdminApi)(signed(config.provisioningAdminUrl)),
    referential: yield* operatorApiClient(ReferentialAdminApi)(signed(config.referentialAdminUrl)),
    webhook: yield* operatorApiClient(WebhookAdminApi)(signed(config.webhookAdminUrl)),
    console: yield* operatorApiClient(ConsoleAdminApi)(signed(config.consoleAdminUrl))
  }
})

/**
 * Typed clients of the five admin APIs, every request signed as the operator and every path
 * parameter percent-encoded (`operatorApiClient`). This is the CLI's only port: the operations
 * speak to the services through it and nothing else.
 */
export class AdminClients extends Context.Service<AdminClients>()("@portfolio/cli/AdminClients", { make }) {
  /** The clients, built from `OperatorSettings` and an `HttpClient`. */
  static readonly layer = Layer.effect(AdminClients, AdminClients.make)
}
