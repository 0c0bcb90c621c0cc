import { OpenApi } from "@effect/platform"
import { Context } from "effect"
import type { Scope } from "./Role.js"

/** The token scope an endpoint requires. Read by the gateway; written into the OpenAPI tags. */
export class RequiredScope extends Context.Tag("@portfolio/domain/RequiredScope")<RequiredScope, Scope>() {}

/** A role the token's holder must have in the target tenant (provisioning endpoints). */
export class RequiredRole extends Context.Tag("@portfolio/domain/RequiredRole")<RequiredRole, "tenant-admin">() {}

/** The service that answers a group of the public contract; the gateway forwards there. */
export type UpstreamName = "referential" | "provisioning"
export class Upstream extends Context.Tag("@portfolio/domain/Upstream")<Upstream, UpstreamName>() {}

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
