import { HttpClient } from "effect/http"
import { ProvisioningAdminApi, Unavailable } from "@portfolio/domain"
import { InternalSecret, operatorApiClient } from "@portfolio/platform/security"
import { Effect, Layer, Option } from "effect"
import { GatewaySettings } from "../../Config.js"
import { MembershipDesk } from "../../ports/MembershipDesk.js"

/**
 * MembershipDesk read from provisioning's admin API, which holds them (the gateway never reads its
 * tables), signed as the gateway itself: provisioning's security log has no entry for a read.
 */
export const MembershipDeskHttp = Layer.effect(
  MembershipDesk,
  Effect.gen(function*() {
    const { provisioningAdminUrl } = yield* GatewaySettings
    const secret = yield* InternalSecret
    const http = yield* HttpClient.HttpClient
    const client = yield* operatorApiClient(ProvisioningAdminApi)({ baseUrl: provisioningAdminUrl.href.replace(/\/+$/, ""), secret, operator: "gateway" }).pipe(
      Effect.provideService(HttpClient.HttpClient, http)
    )
    return MembershipDesk.of({
      current: (tenantId, userSub) =>
        client.provisioningAdmin.findMembership({ params: { tenantId, userSub } }).pipe(
          Effect.map((member) => Option.some({ email: member.userEmail, role: member.arbRole })),
          Effect.catchTag("NotFound", () => Effect.succeed(Option.none())),
          Effect.tapError((cause) => Effect.logWarning("membership lookup failed", { cause: String(cause) })),
          Effect.mapError(() => new Unavailable({ detail: "The record of the tenant's members is unavailable; retry shortly." })),
          Effect.withSpan("MembershipDesk.current")
        )
    })
  })
)
