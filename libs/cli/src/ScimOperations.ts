import { CreateScimTokenRequest } from "@portfolio/domain"
import { Effect } from "effect"
import { AdminClients } from "./AdminClients.js"
import { getTenant } from "./Operations.js"

/**
 * The operator's SCIM token operations, on the gateway's admin API (docs/scim.md, "The SCIM
 * token"). The gateway keeps a tenant's tokens under its id, so the slug is resolved through
 * provisioning first, for every command: even a revocation names the tenant, so that an id of
 * another tenant's token revokes nothing.
 */

export const createScimToken = Effect.fn("createScimToken")(function*(input: { readonly tenant: string; readonly label: string }) {
  const { gateway } = yield* AdminClients
  const tenant = yield* getTenant(input.tenant)
  const token = yield* gateway.gatewayAdmin.createScimToken({
    params: { tenantId: tenant.id },
    payload: new CreateScimTokenRequest({ label: input.label })
  })
  return { tenant, token }
})

export const listScimTokens = Effect.fn("listScimTokens")(function*(slug: string) {
  const { gateway } = yield* AdminClients
  const tenant = yield* getTenant(slug)
  const tokens = yield* gateway.gatewayAdmin.listScimTokens({ params: { tenantId: tenant.id } })
  return { tenant, tokens }
})

export const revokeScimToken = Effect.fn("revokeScimToken")(function*(input: { readonly tenant: string; readonly id: string }) {
  const { gateway } = yield* AdminClients
  const tenant = yield* getTenant(input.tenant)
  const token = yield* gateway.gatewayAdmin.revokeScimToken({ params: { tenantId: tenant.id, id: input.id } })
  return { tenant, token }
})
