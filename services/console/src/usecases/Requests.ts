import type { RequestOrigin } from "@portfolio/platform/http"
import { Context } from "effect"

/** Where a page's request comes from, as the security log records it. */

export class CurrentOrigin extends Context.Tag("@portfolio/console/CurrentOrigin")<CurrentOrigin, RequestOrigin>() {}
