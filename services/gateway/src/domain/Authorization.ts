import { type ArbRole, InsufficientScope, type Scope, ScimApiPrefix, scopeAllows } from "@portfolio/domain"
import { Result, Option } from "effect"
import type { PublicRoute } from "./AllowList.js"

const stripPrefix = (path: string, prefix: string) => (path.startsWith(prefix) ? path.slice(prefix.length) : path)

/** What a token carries that the routes check: a PAT's holder's role, or the kind of a partner client's or SCIM token. */
export interface Holder {
  readonly scope: Scope
  readonly role: ArbRole | "partner" | "scim"
}

const kindOf = (holder: Holder) =>
  holder.role === "partner" ? "a partner client's access token" : holder.role === "scim" ? "a SCIM token" : "a personal access token"

/**
 * A SCIM token opens the SCIM endpoints and nothing else, and they open to nothing else
 * (docs/scim.md): an identity tool's token must not read the referential, nor a member's token
 * provision people behind the tenant-admins' backs.
 */
const credentialRefusal = (route: PublicRoute, holder: Holder, target: string): InsufficientScope | undefined => {
  const routeTakesScim = Option.isSome(route.credential)
  if (routeTakesScim && holder.role !== "scim") {
    return new InsufficientScope({
      detail: `${target} is a SCIM endpoint: it takes a SCIM token (ap_scim_…) made by a tenant-admin, not ${kindOf(holder)}`
    })
  }
  if (!routeTakesScim && holder.role === "scim") {
    return new InsufficientScope({
      detail: `a SCIM token is accepted only under ${ScimApiPrefix}; ${target} takes a personal access token or a partner client's access token`
    })
  }
  return undefined
}

/**
 * May this token's holder call this route? The kind of credential first, then the scope, then the
 * group's role, which a partner client never has (docs/product-rules.md#partner-clients). The detail names what the token has
 * and what the request needed, with the path relative to the base URL as the documentation
 * writes it.
 */
export const authorize = (
  route: PublicRoute,
  pat: Holder,
  request: { readonly method: string; readonly path: string },
  basePath: string
): Result.Result<PublicRoute, InsufficientScope> => {
  const target = `${request.method} ${stripPrefix(request.path, basePath)}`
  const wrongKind = credentialRefusal(route, pat, target)
  if (wrongKind !== undefined) return Result.fail(wrongKind)
  if (!scopeAllows(pat.scope, route.scope)) {
    return Result.fail(
      new InsufficientScope({ detail: `token scope '${pat.scope}' does not allow ${target}, which requires '${route.scope}'` })
    )
  }
  if (Option.isSome(route.requiredRole) && pat.role !== route.requiredRole.value) {
    if (pat.role === "partner") {
      return Result.fail(
        new InsufficientScope({ detail: `${target} requires the role '${route.requiredRole.value}' in the tenant, which a partner client's token never has` })
      )
    }
    return Result.fail(
      new InsufficientScope({
        detail: `${target} requires the token holder to have the role '${route.requiredRole.value}' in the tenant; the holder has '${pat.role}'`
      })
    )
  }
  return Result.succeed(route)
}
