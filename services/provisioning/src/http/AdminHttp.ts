import { HttpApiBuilder } from "@effect/platform"
import { ProvisioningAdminApi } from "@portfolio/domain"
import { createTenant, findMember, getTenant, provisionSsoMember } from "../usecases/Tenants.js"

export const ProvisioningAdminHttpLive = HttpApiBuilder.group(ProvisioningAdminApi, "provisioningAdmin", (handlers) =>
  handlers
    .handle("createTenant", ({ payload }) => createTenant(payload))
    .handle("getTenant", ({ path }) => getTenant(path.slug))
    .handle("findMember", ({ path }) => findMember(path.slug, path.email))
    .handle("provisionSsoMember", ({ path, payload }) =>
      provisionSsoMember({ slug: path.slug, ...payload })))
