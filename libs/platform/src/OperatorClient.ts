import { HttpClient, HttpClientRequest } from "@effect/platform"
import { CallerIdentity } from "@portfolio/domain"
import { Clock, Effect } from "effect"
import { audienceOfPath } from "./AssertionAudience.js"
import { signedRequest } from "./AssertionSigning.js"

/** Operator calls are not about one tenant; the admin APIs take the tenant from the path or body. */
export const OperatorTenantId = "00000000-0000-0000-0000-000000000000"

export const operatorIdentity = (operator: string) =>
  new CallerIdentity({ tenantId: OperatorTenantId, subject: operator, role: "operator", scope: "admin" })

/**
 * Points a client at `baseUrl` and signs every request with an operator assertion bound to the
 * service it calls, its method, its final target (base URL and query applied) and its body.
 * The audience is read from the path the typed client built, before the base URL's own path (a
 * reverse proxy's prefix) hides which contract declares it.
 */
export const operatorClient = (options: { readonly baseUrl: string; readonly secret: string; readonly operator: string }) => {
  const identity = operatorIdentity(options.operator)
  return (client: HttpClient.HttpClient): HttpClient.HttpClient =>
    client.pipe(
      HttpClient.mapRequestEffect((request) =>
        // Effect's clock, not the wall's: the lifetime of what is signed follows the program's time.
        Effect.map(Clock.currentTimeMillis, (nowMs) => {
          const audience = audienceOfPath(request.method, new URL(request.url, "http://relative.invalid").pathname)
          if (audience === undefined) throw new Error(`no admin API declares ${request.method} ${request.url}`)
          return signedRequest(options.secret, identity, { audience, nowMs })(HttpClientRequest.prependUrl(request, options.baseUrl))
        }))
    )
}
