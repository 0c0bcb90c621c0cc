import { HttpClient } from "@effect/platform"
import { ProvisioningAdminApi, Unavailable } from "@portfolio/domain"
import { InternalSecret } from "@portfolio/platform"
import { operatorApiClient } from "@portfolio/platform/OperatorClient"
import { Effect, Layer, Option } from "effect"
import { GatewayConfig } from "../../Config.js"
import { Memberships } from "../../ports/Memberships.js"

/**
 * Memberships read from provisioning's admin API, which holds them (the gateway never reads its
 * tables), signed as the gateway itself: provisioning's security log has no entry for a read.
 */
export const MembershipsHttp = Layer.effect(
  Memberships,
  Effect.gen(function*() {
    const { provisioningAdminUrl } = yield* GatewayConfig
    const secret = yield* InternalSecret
    const http = yield* HttpClient.HttpClient
    const client = yield* operatorApiClient(ProvisioningAdminApi)({ baseUrl: provisioningAdminUrl.href.replace(/\/+$/, ""), secret, operator: "gateway" }).pipe(
      Effect.provideService(HttpClient.HttpClient, http)
    )
    return Memberships.of({
      current: (tenantId, userSub) =>
        client.provisioningAdmin.findMembership({ path: { tenantId, userSub } }).pipe(
          Effect.map((member) => Option.some({ email: member.userEmail, role: member.arbRole })),
          Effect.catchTag("NotFound", () => Effect.succeed(Option.none())),
          Effect.tapError((cause) => Effect.logWarning("membership lookup failed", { cause: String(cause) })),
          Effect.mapError(() => new Unavailable({ detail: "The record of the tenant's members is unavailable; retry shortly." })),
          Effect.withSpan("Memberships.current")
        )
    })
  })
)
