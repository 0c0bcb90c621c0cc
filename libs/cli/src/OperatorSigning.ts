import { HttpClient, HttpClientRequest } from "@effect/platform"
import { CallerIdentity } from "@portfolio/domain"
import { AssertionHeader, signAssertion } from "@portfolio/platform/InternalAssertion"

/** Operator calls are not about one tenant; the admin APIs take the tenant from the path or body. */
export const OperatorTenantId = "00000000-0000-0000-0000-000000000000"

export const operatorIdentity = (operator: string) =>
  new CallerIdentity({ tenantId: OperatorTenantId, subject: operator, role: "operator", scope: "admin" })

/**
 * Points a client at `baseUrl` and signs every request with an operator assertion bound to its
 * method and final path. Signing happens after the base URL is applied so the signed path is the
 * one the service sees.
 */
export const operatorClient = (options: { readonly baseUrl: string; readonly secret: string; readonly operator: string }) => {
  const identity = operatorIdentity(options.operator)
  return (client: HttpClient.HttpClient): HttpClient.HttpClient =>
    client.pipe(
      HttpClient.mapRequest(HttpClientRequest.prependUrl(options.baseUrl)),
      HttpClient.mapRequest((request) =>
        HttpClientRequest.setHeader(
          request,
          AssertionHeader,
          signAssertion(options.secret, identity, { method: request.method, path: new URL(request.url).pathname })
        )
      )
    )
}
