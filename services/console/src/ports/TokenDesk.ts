import type { ApprovedPatRequest, ArbRole, PatRequest, PatRequestStatus, PatSummary, RevokedPat, Scope } from "@portfolio/domain"
import type { Page } from "@portfolio/platform/http"
import { Context, Data, type Effect } from "effect"
import type { UpstreamUnavailable } from "./DirectoryDesk.js"

/** The signed-in member the console acts for, as provisioning holds them. */
export interface Actor {
  readonly tenantId: string
  readonly userSub: string
  readonly email: string
  readonly role: ArbRole
}

/**
 * The gateway refused what the member asked (a rule of docs/product-rules.md#pat-requests, an
 * object gone or already decided): nothing changed, and `detail` says why in words a member reads.
 */
export class Refused extends Data.TaggedError("Refused")<{ readonly status: number; readonly detail: string }> {}

export interface NewTokenRequest {
  readonly scope: Scope
  readonly days: number
  readonly justification: string
}

/** Requests a page of the console shows: a member's requests of every state grow for ever. */
export const RequestsPageSize = 50

/** PAT requests and tokens: the gateway's admin API, on behalf of the member. */
export interface TokenDeskShape {
  readonly file: (actor: Actor, request: NewTokenRequest) => Effect.Effect<PatRequest, Refused | UpstreamUnavailable>
  /** A page of the requests of the actor's tenant, from `cursor` (a previous page's `next`) or the newest. */
  readonly requests: (
    actor: Actor,
    filter: { readonly status?: PatRequestStatus; readonly userSub?: string },
    cursor?: string
  ) => Effect.Effect<Page<PatRequest>, Refused | UpstreamUnavailable>
  readonly approve: (actor: Actor, requestId: string) => Effect.Effect<ApprovedPatRequest, Refused | UpstreamUnavailable>
  readonly deny: (actor: Actor, requestId: string, reason: string) => Effect.Effect<PatRequest, Refused | UpstreamUnavailable>
  /** The actor's own active tokens. */
  readonly tokens: (actor: Actor) => Effect.Effect<ReadonlyArray<PatSummary>, UpstreamUnavailable>
  /** Revokes one of the actor's own tokens; anyone else's answers as an unknown one. */
  readonly revoke: (actor: Actor, patId: string) => Effect.Effect<RevokedPat, Refused | UpstreamUnavailable>
}

export class TokenDesk extends Context.Service<TokenDesk, TokenDeskShape>()("@portfolio/console/TokenDesk") {}
