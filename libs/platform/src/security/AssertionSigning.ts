import { type HttpBody, HttpClientRequest, Url } from "effect/http"
import type { CallerIdentity } from "@portfolio/domain"
import { Option, Result } from "effect"
import { audienceOfPath } from "./AssertionAudience.js"
import { AssertionHeader, type AssertedRequest, type Audience, signAssertion, type SignOptions } from "./InternalAssertion.js"

// A relative URL (a test client adds the server's origin later) is read against a placeholder
// origin: the target, which is all that is signed, is the same.
const placeholderOrigin = "http://relative.invalid"

const bodyOf = (body: HttpBody.HttpBody): Uint8Array | string => {
  switch (body._tag) {
    case "Empty":
      return ""
    case "Uint8Array":
      return body.body
    case "Raw":
      if (typeof body.body === "string" || body.body instanceof Uint8Array) return body.body
  }
  // A stream or form data gets its bytes only while it is sent: too late to sign them.
  throw new Error(`an assertion cannot be signed for a ${body._tag} body`)
}

/**
 * What an HttpClientRequest puts on the wire, as its assertion must name it: the method, the
 * target the HTTP client derives from the URL and the URL parameters (as `fetch` sends it:
 * `pathname` + `search`), and the body's bytes.
 */
const wireRequestOf = (request: HttpClientRequest.HttpClientRequest): Omit<AssertedRequest, "audience"> => {
  const url = Url.make(request.url.startsWith("/") ? `${placeholderOrigin}${request.url}` : request.url, request.urlParams, Option.getOrUndefined(request.hash))
  if (Result.isFailure(url)) throw url.failure
  return { method: request.method, target: `${url.success.pathname}${url.success.search}`, body: bodyOf(request.body) }
}

export interface SignedRequestOptions extends SignOptions {
  /** By default, the service whose contract declares the request's path. */
  readonly audience?: Audience
}

/** Signs a client request for `identity`. Apply it last, once the URL and the body are final. */
export const signedRequest = (secret: string, identity: CallerIdentity, options: SignedRequestOptions = {}) =>
(request: HttpClientRequest.HttpClientRequest) => {
  const wire = wireRequestOf(request)
  const audience = options.audience ?? audienceOfPath(wire.method, wire.target.split("?")[0]!)
  if (audience === undefined) throw new Error(`no contract declares ${wire.method} ${wire.target}: its audience is unknown`)
  return HttpClientRequest.setHeader(request, AssertionHeader, signAssertion(secret, identity, { ...wire, audience }, options))
}
