import { Context } from "effect"

/** Where a page's request comes from, as the security log records it. */
export interface RequestOrigin {
  readonly ip: string
  readonly userAgent: string
}

export class CurrentOrigin extends Context.Tag("@portfolio/console/CurrentOrigin")<CurrentOrigin, RequestOrigin>() {}
