import { Context, Layer } from "effect"

/** How many e-mails the notices remember at most: past it, the oldest are forgotten first. */
const MaxRemembered = 10_000

export interface LockoutNoticesShape {
  /**
   * True once per e-mail per lockout window: whether this locked-out attempt is the one the
   * security log records. Every further attempt of the window would only fill the log of the
   * e-mail's tenants (a stranger who knows an admin's address could push real entries off the
   * page) and call provisioning for nothing.
   */
  readonly claim: (emailKey: string, nowMs: number, windowMs: number) => boolean
}

/**
 * The lockout notices of this process (docs/product-rules.md#security-event-log). Per replica: with
 * N consoles, a window's lockout is recorded at most N times, which still bounds the log.
 */
export class LockoutNotices extends Context.Service<LockoutNotices, LockoutNoticesShape>()("@portfolio/console/LockoutNotices") {
  static readonly layer = Layer.sync(LockoutNotices, () => {
    const until = new Map<string, number>()
    return {
      claim: (emailKey, nowMs, windowMs) => {
        const known = until.get(emailKey)
        if (known !== undefined && known > nowMs) return false
        until.delete(emailKey)
        until.set(emailKey, nowMs + windowMs)
        if (until.size > MaxRemembered) {
          for (const [key, end] of until) if (end <= nowMs) until.delete(key)
          for (const key of until.keys()) {
            if (until.size <= MaxRemembered) break
            until.delete(key)
          }
        }
        return true
      }
    }
  })
}
