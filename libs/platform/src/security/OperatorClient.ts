import { type HttpApi, HttpApiClient, type HttpApiGroup } from "effect/http-api"
import { HttpClient, HttpClientRequest } from "effect/http"
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

/**
 * A path with an empty segment (`/members//remove`): what a typed client builds from an empty path
 * parameter. A URL parser keeps it, but no route of an admin API has one, so it is refused, never
 * sent. (Effect's client percent-encodes each parameter and refuses `.` and `..` itself.)
 */
const hasEmptySegment = (path: string) => path.slice(1).split("/").some((segment) => segment === "")

/**
 * Typed clients of an admin API, signed as `operatorClient` signs, their path parameters
 * percent-encoded once (by Effect's client), none of them empty: how the CLI, the console and the
 * gateway call the admin APIs. Each client is cheap (the console makes one per member and call).
 */
export const operatorApiClient = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>) =>
(options: { readonly baseUrl: string; readonly secret: string; readonly operator: string }) =>
  HttpApiClient.make(api, {
    transformClient: (client) =>
      operatorClient(options)(
        // Checked first, on the path the typed client built, before the base URL is prepended.
        HttpClient.mapRequest(client, (request) => {
          if (hasEmptySegment(new URL(request.url, "http://relative.invalid").pathname)) {
            throw new Error("a path parameter cannot be empty, '.' or '..'")
          }
          return request
        })
      )
  })
