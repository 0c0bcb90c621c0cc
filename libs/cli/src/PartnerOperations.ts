import { CreatePartnerClientRequest, RotatePartnerSecretRequest, type Scope } from "@portfolio/domain"
import { Effect } from "effect"
import { AdminClients } from "./AdminClients.js"
import { getTenant } from "./Operations.js"

/**
 * The operator's partner client operations, on the gateway's admin API. A client belongs to a
 * tenant by id, so the slug is resolved through provisioning first; afterwards a client is reached
 * by its client id.
 */

export const createPartner = Effect.fn("createPartner")(function*(input: { readonly tenant: string; readonly name: string; readonly scope: Scope }) {
  const { gateway } = yield* AdminClients
  const tenant = yield* getTenant(input.tenant)
  const client = yield* gateway.gatewayAdmin.createPartnerClient({
    params: { tenantId: tenant.id },
    payload: new CreatePartnerClientRequest({ name: input.name, scope: input.scope })
  })
  return { tenant, client }
})

export const listPartners = Effect.fn("listPartners")(function*(slug: string) {
  const { gateway } = yield* AdminClients
  const tenant = yield* getTenant(slug)
  const clients = yield* gateway.gatewayAdmin.listPartnerClients({ params: { tenantId: tenant.id } })
  return { tenant, clients }
})

export const rotatePartnerSecret = Effect.fn("rotatePartnerSecret")(function*(clientId: string, graceSeconds: number) {
  const { gateway } = yield* AdminClients
  return yield* gateway.gatewayAdmin.rotatePartnerSecret({ params: { clientId }, payload: new RotatePartnerSecretRequest({ graceSeconds }) })
})

export const setPartnerEnabled = Effect.fn("setPartnerEnabled")(function*(clientId: string, enabled: boolean) {
  const { gateway } = yield* AdminClients
  return yield* enabled
    ? gateway.gatewayAdmin.enablePartnerClient({ params: { clientId } })
    : gateway.gatewayAdmin.disablePartnerClient({ params: { clientId } })
})
