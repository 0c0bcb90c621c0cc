import { HttpApiClient } from "@effect/platform"
import { ConsoleAdminApi, GatewayAdminApi, ProvisioningAdminApi, ReferentialAdminApi, WebhookAdminApi } from "@portfolio/domain"
import { Effect, Redacted } from "effect"
import { OperatorConfig } from "./OperatorConfig.js"
import { operatorClient } from "@portfolio/platform/OperatorClient"

/**
 * Typed clients of the five admin APIs, every request signed as the operator. This is the
 * CLI's only port: the operations speak to the services through it and nothing else.
 */
export class AdminClients extends Effect.Service<AdminClients>()("@portfolio/cli/AdminClients", {
  effect: Effect.gen(function*() {
    const config = yield* OperatorConfig
    const signed = (baseUrl: string) => ({
      transformClient: operatorClient({ baseUrl, secret: Redacted.value(config.secret), operator: config.operator })
    })
    return {
      gateway: yield* HttpApiClient.make(GatewayAdminApi, signed(config.gatewayAdminUrl)),
      provisioning: yield* HttpApiClient.make(ProvisioningAdminApi, signed(config.provisioningAdminUrl)),
      referential: yield* HttpApiClient.make(ReferentialAdminApi, signed(config.referentialAdminUrl)),
      webhook: yield* HttpApiClient.make(WebhookAdminApi, signed(config.webhookAdminUrl)),
      console: yield* HttpApiClient.make(ConsoleAdminApi, signed(config.consoleAdminUrl))
    }
  })
}) {}
