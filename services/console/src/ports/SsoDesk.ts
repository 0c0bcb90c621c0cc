import type { SsoConnection, SsoConnectionRequest } from "@portfolio/domain"
import { Context, type Effect, type Option } from "effect"
import type { UpstreamUnavailable } from "./DirectoryDesk.js"
import type { Actor, Refused } from "./TokenDesk.js"

/**
 * The tenant's single sign-on connection: provisioning's admin API, made as the member, whose
 * role provisioning reads from its own records (tenant-admins only) and whose connection it checks
 * as it checks an operator's (the issuer's discovery document first). The client secret goes in
 * with every `set` and never comes back.
 */
export interface SsoDeskShape {
  /** None when the tenant has no connection. */
  readonly get: (actor: Actor) => Effect.Effect<Option.Option<SsoConnection>, Refused | UpstreamUnavailable>
  readonly set: (actor: Actor, request: SsoConnectionRequest) => Effect.Effect<SsoConnection, Refused | UpstreamUnavailable>
  readonly disable: (actor: Actor) => Effect.Effect<void, Refused | UpstreamUnavailable>
}

export class SsoDesk extends Context.Service<SsoDesk, SsoDeskShape>()("@portfolio/console/SsoDesk") {}
