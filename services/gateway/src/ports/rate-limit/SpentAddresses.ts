import { Context, type Effect } from "effect"

/**
 * Client addresses known to have spent their budget for calls without a valid token, and until
 * when. It lets the admission refuse such an address before looking a token up in the store, so
 * that a flood of forged well-formed tokens from one address costs no database query once the
 * address is over its limit. The gateway's own port: only the admission needs it.
 */
export interface SpentAddressesShape {
  /** Records that `clientIp`'s window stays full until `untilMs` (the window's reset). */
  readonly markSpent: (clientIp: string, untilMs: number) => Effect.Effect<void>
  readonly isSpent: (clientIp: string, nowMs: number) => Effect.Effect<boolean>
}

export class SpentAddresses extends Context.Service<SpentAddresses, SpentAddressesShape>()("@portfolio/gateway/SpentAddresses") {}
