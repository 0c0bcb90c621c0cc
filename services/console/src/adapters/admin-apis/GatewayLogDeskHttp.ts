import { GatewayAdminApi } from "@portfolio/domain"
import { Effect, Layer } from "effect"
import { ConsoleSettings } from "../../Config.js"
import { GatewayLogDesk } from "../../ports/GatewayLogDesk.js"
import { memberDesk, securityLogQuery } from "./Upstream.js"

/** The gateway's security log through its admin API, read as the console for the tenant's log page. */
export const GatewayLogDeskHttp = Layer.effect(
  GatewayLogDesk,
  Effect.gen(function*() {
    const { gatewayAdminUrl } = yield* ConsoleSettings
    const gateway = yield* memberDesk(GatewayAdminApi, gatewayAdminUrl, "gatewayAdmin")
    return GatewayLogDesk.of({
      securityEvents: (tenantId, page) =>
        gateway.outage(`tenant:${tenantId}`, (g) => g.listGatewaySecurityEvents({ params: { tenantId }, query: securityLogQuery(page) }))
    })
  })
)
