import { type HttpApi, HttpApiClient, type HttpApiEndpoint, type HttpApiGroup, HttpClient, HttpClientRequest } from "@effect/platform"
import { CallerIdentity } from "@portfolio/domain"
import { Clock, Effect, Option, ParseResult, Schema } from "effect"
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
 * A path parameter as it travels: one segment, percent-encoded (`encodeURIComponent`), so that a
 * `?`, `#`, `%`, a tab or a space in a value is part of the value and never ends the path, starts
 * a query or vanishes in URL parsing. "", "." and ".." are no segment (a URL parser removes or
 * resolves them): refused, never sent.
 */
const PathSegment = Schema.transformOrFail(Schema.String, Schema.String, {
  strict: true,
  decode: (wire, _, ast) =>
    ParseResult.try({ try: () => decodeURIComponent(wire), catch: () => new ParseResult.Type(ast, wire, "not a percent-encoded path segment") }),
  encode: (value, _, ast) =>
    value === "" || value === "." || value === ".."
      ? ParseResult.fail(new ParseResult.Type(ast, value, "a path parameter cannot be empty, '.' or '..'"))
      // encodeURIComponent throws on a lone surrogate, which no URL can carry either.
      : ParseResult.try({ try: () => encodeURIComponent(value), catch: () => new ParseResult.Type(ast, value, "a path parameter must be well-formed Unicode") })
})

const EncodedPathParameters = Schema.Record({ key: Schema.String, value: PathSegment })

/**
 * The same API for a client, its path parameters percent-encoded once their own schema encoded
 * (and checked) them. `HttpApiClient` (@effect/platform 0.97) pastes the values into the path as
 * they are: `sub?x=1` became a query, `a#b` a fragment, `.\t.` a dot segment once the tab was
 * stripped (docs/security.md, "The console").
 */
export const withEncodedPathParameters = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>
): HttpApi.HttpApi<Id, Groups, E, R> => {
  let encoded = api as unknown as HttpApi.HttpApi.Any
  for (const group of Object.values(api.groups as unknown as Record<string, HttpApiGroup.HttpApiGroup.AnyWithProps>)) {
    let withEncoded = group
    for (const endpoint of Object.values(group.endpoints) as Array<HttpApiEndpoint.HttpApiEndpoint.AnyWithProps>) {
      if (Option.isSome(endpoint.pathSchema)) {
        // `add` replaces the endpoint of that name, and then the group of that identifier.
        withEncoded = withEncoded.add(endpoint.setPath(Schema.compose(EncodedPathParameters, endpoint.pathSchema.value, { strict: false })))
      }
    }
    encoded = (encoded as HttpApi.HttpApi<string, HttpApiGroup.HttpApiGroup.AnyWithProps>).add(withEncoded) as unknown as HttpApi.HttpApi.Any
  }
  return encoded as unknown as HttpApi.HttpApi<Id, Groups, E, R>
}

/**
 * Typed clients of an admin API, signed as `operatorClient` signs, their path parameters
 * percent-encoded: how the CLI, the console and the gateway call the admin APIs. The API is
 * prepared once; each client is then cheap (the console makes one per member and call).
 */
export const operatorApiClient = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(api: HttpApi.HttpApi<Id, Groups, E, R>) => {
  const encoded = withEncodedPathParameters(api)
  return (options: { readonly baseUrl: string; readonly secret: string; readonly operator: string }) =>
    HttpApiClient.make(encoded, { transformClient: operatorClient(options) })
}
