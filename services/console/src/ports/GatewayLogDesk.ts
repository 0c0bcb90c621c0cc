import { Context, type Effect } from "effect"
import type { UpstreamUnavailable } from "./DirectoryDesk.js"
import type { SecurityEvent } from "@portfolio/domain"
import type { SecurityLogPage } from "@portfolio/platform/security"

/**
 * The gateway's security log (docs/product-rules.md#security-event-log): what operators did to a
 * tenant's tokens, requests and partner clients on its admin API, which the console never sees.
 */
export interface GatewayLogDeskShape {
  /** A tenant's entries at or after `since`, newest first, at most `limit`. */
  readonly securityEvents: (
    tenantId: string,
    page: SecurityLogPage
  ) => Effect.Effect<ReadonlyArray<SecurityEvent>, UpstreamUnavailable>
}

export class GatewayLogDesk extends Context.Service<GatewayLogDesk, GatewayLogDeskShape>()("@portfolio/console/GatewayLogDesk") {}
