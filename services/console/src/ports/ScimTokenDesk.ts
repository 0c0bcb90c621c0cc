import type { ScimToken, ScimTokenWithSecret } from "@portfolio/domain"
import { Context, type Effect } from "effect"
import type { UpstreamUnavailable } from "./DirectoryDesk.js"
import type { Actor, Refused } from "./TokenDesk.js"

/**
 * The tenant's SCIM tokens (docs/scim.md, "The SCIM token"): the gateway's admin API, on behalf of
 * the member, always under the member's tenant.
 */
export interface ScimTokenDeskShape {
  /** The active ones first, then the revoked ones, newest first in each. */
  readonly list: (actor: Actor) => Effect.Effect<ReadonlyArray<ScimToken>, UpstreamUnavailable>
  /** Refused with 409 when the tenant holds its most active tokens already. */
  readonly create: (actor: Actor, label: string) => Effect.Effect<ScimTokenWithSecret, Refused | UpstreamUnavailable>
  readonly revoke: (actor: Actor, id: string) => Effect.Effect<ScimToken, Refused | UpstreamUnavailable>
}

export class ScimTokenDesk extends Context.Service<ScimTokenDesk, ScimTokenDeskShape>()("@portfolio/console/ScimTokenDesk") {}
