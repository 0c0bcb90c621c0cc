import type { RequestOrigin } from "@portfolio/platform/http"
import { Context } from "effect"

/** Where a page's request comes from, as the security log records it. */

export class CurrentOrigin extends Context.Service<CurrentOrigin, RequestOrigin>()("@portfolio/console/CurrentOrigin") {}
