import { type ArbRole, SsoConnectionRequest } from "@portfolio/domain"
import { Effect, Redacted } from "effect"
import { AdminClients } from "./AdminClients.js"
import type { RoleMapping } from "./SsoInput.js"

/**
 * The operator's single sign-on operations, on provisioning's admin API, which reaches a tenant's
 * connection by its slug. Provisioning owns every rule (it reads the issuer's discovery document
 * before it writes anything); the CLI only puts the flags in the contract's shape.
 */

export interface SetSsoInput {
  readonly tenant: string
  readonly issuer: string
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted<string>
  readonly domains: ReadonlyArray<string>
  readonly defaultRole: ArbRole | undefined
  readonly roleClaim: string | null
  readonly roleMap: ReadonlyArray<RoleMapping>
  readonly required: boolean
  readonly breakGlass: ReadonlyArray<string>
  readonly emailVerifiedClaim: string | undefined
}

/** The whole connection each time, as the contract wants it: what is not given takes its default, not its old value. */
export const setSso = Effect.fn("setSso")(function*(input: SetSsoInput) {
  const { provisioning } = yield* AdminClients
  return yield* provisioning.provisioningAdmin.setSsoConnection({
    params: { slug: input.tenant },
    payload: new SsoConnectionRequest({
      issuer: input.issuer,
      clientId: input.clientId,
      clientSecret: input.clientSecret,
      domains: input.domains,
      ...(input.defaultRole === undefined ? {} : { defaultRole: input.defaultRole }),
      ...(input.emailVerifiedClaim === undefined ? {} : { emailVerifiedClaim: input.emailVerifiedClaim }),
      roleClaim: input.roleClaim,
      roleMap: input.roleMap,
      required: input.required,
      breakGlass: input.breakGlass
    })
  })
})

export const getSso = Effect.fn("getSso")(function*(tenant: string) {
  const { provisioning } = yield* AdminClients
  return yield* provisioning.provisioningAdmin.getSsoConnection({ params: { slug: tenant } })
})

export const disableSso = Effect.fn("disableSso")(function*(tenant: string) {
  const { provisioning } = yield* AdminClients
  return yield* provisioning.provisioningAdmin.disableSsoConnection({ params: { slug: tenant } })
})

export const confirmSsoDomains = Effect.fn("confirmSsoDomains")(function*(tenant: string) {
  const { provisioning } = yield* AdminClients
  return yield* provisioning.provisioningAdmin.confirmSsoDomains({ params: { slug: tenant } })
})
