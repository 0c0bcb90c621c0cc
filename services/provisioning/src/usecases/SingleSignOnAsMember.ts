import { type CallerIdentity, NotFound, type Scope, type SsoConnectionRequest } from "@portfolio/domain"
import { Effect, Option } from "effect"
import { TenantRepository } from "../ports/TenantRepository.js"
import { authorizeTenantAdmin } from "./Authorization.js"
import { disableSsoConnection, getSsoConnection, setSsoConnection } from "./SingleSignOn.js"

/**
 * The tenant's single sign-on connection, for a member of it rather than an operator (the
 * console's page): the caller comes from provisioning's records (`callerFromRecords`), so that
 * only an active tenant-admin passes, refused as the public endpoints refuse (401, 403). Then the
 * operator's use cases run on the tenant's slug, with the member as the actor and no origin: the
 * console logs these changes itself, with the member's browser address.
 */
const tenantAdminOf = (caller: CallerIdentity, required: Scope, operation: string) =>
  Effect.gen(function*() {
    const admin = yield* authorizeTenantAdmin(caller, required, operation)
    const tenant = yield* (yield* TenantRepository).findById(caller.tenantId)
    // An active membership names an existing tenant; a missing one reads as the operator's 404.
    if (Option.isNone(tenant)) return yield* new NotFound({ detail: "No such tenant." })
    return { admin, tenant: tenant.value }
  })

export const getSsoConnectionAs = Effect.fn("getSsoConnectionAs")(function*(caller: CallerIdentity) {
  const { tenant } = yield* tenantAdminOf(caller, "read", "reading the single sign-on connection")
  return yield* getSsoConnection(tenant.slug)
})

export const setSsoConnectionAs = Effect.fn("setSsoConnectionAs")(function*(caller: CallerIdentity, request: SsoConnectionRequest) {
  const { admin, tenant } = yield* tenantAdminOf(caller, "write", "setting the single sign-on connection")
  return yield* setSsoConnection(tenant.slug, request, admin.userSub, undefined, "tenant-admin")
})

export const disableSsoConnectionAs = Effect.fn("disableSsoConnectionAs")(function*(caller: CallerIdentity) {
  const { admin, tenant } = yield* tenantAdminOf(caller, "write", "disabling the single sign-on connection")
  yield* disableSsoConnection(tenant.slug, admin.userSub)
})
