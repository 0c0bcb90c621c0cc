import type { PartnerClient, PartnerClientWithSecret, Scope } from "@portfolio/domain"
import { Context, type Effect } from "effect"
import type { UpstreamUnavailable } from "./DirectoryDesk.js"
import type { Actor, Refused } from "./TokenDesk.js"

/**
 * Partner clients (OAuth 2.0 client credentials): the gateway's admin API, on behalf of the
 * member. A client is reached by its id there whatever its tenant: the use cases check it is the
 * member's tenant's.
 */
export interface PartnerDeskShape {
  readonly list: (actor: Actor) => Effect.Effect<ReadonlyArray<PartnerClient>, UpstreamUnavailable>
  readonly create: (actor: Actor, name: string, scope: Scope) => Effect.Effect<PartnerClientWithSecret, Refused | UpstreamUnavailable>
  readonly rotateSecret: (actor: Actor, clientId: string, graceSeconds: number) => Effect.Effect<PartnerClientWithSecret, Refused | UpstreamUnavailable>
  readonly setEnabled: (actor: Actor, clientId: string, enabled: boolean) => Effect.Effect<PartnerClient, Refused | UpstreamUnavailable>
}

export class PartnerDesk extends Context.Service<PartnerDesk, PartnerDeskShape>()("@portfolio/console/PartnerDesk") {}
