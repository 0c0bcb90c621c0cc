import { OpenApi } from "effect/http-api"
import { Context } from "effect"
import type { Scope } from "./Role.js"

/** The token scope an endpoint requires. Read by the gateway; written into the OpenAPI tags. */
export class RequiredScope extends Context.Service<RequiredScope, Scope>()("@portfolio/domain/RequiredScope") {}

/** A role the token's holder must have in the target tenant (provisioning endpoints). */
export class RequiredRole extends Context.Service<RequiredRole, "tenant-admin">()("@portfolio/domain/RequiredRole") {}

/** The service that answers a group of the public contract; the gateway forwards there. */
export type UpstreamName = "referential" | "provisioning"
export class Upstream extends Context.Service<Upstream, UpstreamName>()("@portfolio/domain/Upstream") {}

type Operation = Record<string, any>

/**
 * Annotates an endpoint with its scope and the matching `scope:<scope>` OpenAPI tag. An endpoint
 * holds one OpenAPI transform, so any other change to its operation (`also`) is made in this one.
 */
export const scoped = (scope: Scope, also: (operation: Operation) => Operation = (operation) => operation) =>
  Context.merge(
    Context.make(RequiredScope, scope),
    OpenApi.annotations({
      transform: (operation) => also({ ...operation, tags: [...(operation.tags ?? []), `scope:${scope}`] })
    })
  )
