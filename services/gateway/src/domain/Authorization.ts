import { type ArbRole, InsufficientScope, type Scope, scopeAllows } from "@portfolio/domain"
import { Either, Option } from "effect"
import type { PublicRoute } from "./AllowList.js"

const stripPrefix = (path: string, prefix: string) => (path.startsWith(prefix) ? path.slice(prefix.length) : path)

/** What a token carries that the routes check: a PAT's holder's role, or none for a partner client's token. */
export interface Holder {
  readonly scope: Scope
  readonly role: ArbRole | "partner"
}

/**
 * May this token's holder call this route? Scope first, then the group's role, which a partner
 * client never has (docs/product-rules.md#partner-clients). The detail names what the token has
 * and what the request needed, with the path relative to the base URL as the documentation
 * writes it.
 */
export const authorize = (
  route: PublicRoute,
  pat: Holder,
  request: { readonly method: string; readonly path: string },
  basePath: string
): Either.Either<PublicRoute, InsufficientScope> => {
  const target = `${request.method} ${stripPrefix(request.path, basePath)}`
  if (!scopeAllows(pat.scope, route.scope)) {
    return Either.left(
      new InsufficientScope({ detail: `token scope '${pat.scope}' does not allow ${target}, which requires '${route.scope}'` })
    )
  }
  if (Option.isSome(route.requiredRole) && pat.role !== route.requiredRole.value) {
    if (pat.role === "partner") {
      return Either.left(
        new InsufficientScope({ detail: `${target} requires the role '${route.requiredRole.value}' in the tenant, which a partner client's token never has` })
      )
    }
    return Either.left(
      new InsufficientScope({
        detail: `${target} requires the token holder to have the role '${route.requiredRole.value}' in the tenant; the holder has '${pat.role}'`
      })
    )
  }
  return Either.right(route)
}
