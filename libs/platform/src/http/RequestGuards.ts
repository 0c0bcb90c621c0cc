import { HttpApi } from "effect/http-api"
import { FindMyWay, HttpIncomingMessage, HttpMethod, HttpMiddleware, HttpServerRequest } from "effect/http"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import type { ErrorCode } from "@portfolio/domain"
import { ByteSize, Clock, Effect, Result, Option } from "effect"
import { audienceOfRoute } from "../security/AssertionAudience.js"
import { AssertionHeader, AssertionVerifier } from "../security/InternalAssertion.js"
import { ErrorsUrl, problemResponse } from "./ProblemResponse.js"

/**
 * What every server of the platform refuses before routing and authentication
 * (docs/product-rules.md#errors): request paths that servers and proxies read differently, and request
 * bodies that are too large, too deep or not JSON where JSON is expected. The checks are pure
 * functions, so that the gateway's node hot path applies the same rules as the Effect servers.
 */

/** The largest request body read or forwarded anywhere: 413 PAYLOAD_TOO_LARGE above. */
export const MaxBodyBytes = 1024 * 1024
const MaxBodySize = ByteSize.bytes(MaxBodyBytes)

/**
 * The deepest nesting of arrays and objects a JSON body may have: 400 INVALID_REQUEST above. The
 * contracts' bodies are flat objects; the schema decoder's error formatter recurses once per
 * level and ran out of stack a few thousand levels down, which answered 500 before this limit.
 */
export const MaxJsonDepth = 32

/**
 * find-my-way's `maxParamLength` (100 by default): a longer parameter made the route vanish (404
 * "No such endpoint") whatever its schema allowed. The invitation id is any string by decision,
 * so no contract bound covers every parameter; the request head is bounded instead (16 KiB, the
 * servers' `maxHeaderSize` and node's default), and no parameter can be longer than that.
 * find-my-way compares the decoded parameter, as the schema sees it; there is no regular
 * expression route for a long parameter to slow down.
 */
export const MaxPathParamLength = 16 * 1024

/**
 * The router settings of every HttpApi server, and of the guard's own matching below. Case-sensitive:
 * find-my-way folds case by default, while the gateway's allow-list compares literal segments byte
 * for byte; `/functions/Search` must be the same endpoint (`/functions/:id`) for both, or a literal
 * route beside a parameter route could run under the parameter route's scope.
 */
export const RouterConfig: Partial<FindMyWay.RouterConfig> = { maxParamLength: MaxPathParamLength, caseSensitive: true }


/**
 * The request target exactly as the client sent it (`/path?query`), as the gateway signed it and
 * as links are made from: Effect 4's `originalUrl` puts the scheme and the Host header before it.
 */
export const requestTarget = (request: HttpServerRequest.HttpServerRequest): string =>
  NodeHttpServerRequest.toIncomingMessage(request).url ?? request.url

export interface TargetParts {
  /** The path exactly as sent. */
  readonly path: string
  /** The query with its `?`, or "". */
  readonly search: string
}

const authority = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/

/**
 * Path and query of a request target as sent, in origin form (`/path?query`) or absolute form
 * (`http://host/path?query`), without decoding or normalising anything. Any other form gives a
 * path that does not start with `/`, which `pathRefusal` refuses.
 */
export const targetParts = (target: string): TargetParts => {
  let rest = target
  if (!target.startsWith("/")) {
    const origin = authority.exec(target)
    if (origin === null) return { path: target, search: "" }
    rest = target.slice(origin[0].length)
    if (!rest.startsWith("/")) rest = `/${rest}`
  }
  const query = rest.indexOf("?")
  return query === -1 ? { path: rest, search: "" } : { path: rest.slice(0, query), search: rest.slice(query) }
}

export const PathRefusals = {
  notAPath: "The request target is not a path.",
  semicolon: "The request path holds a ';', which no path of this API has.",
  dotSegment: "The request path holds a '.' or '..' segment (perhaps percent-encoded); send the path without it.",
  encodedSlash: "The request path holds an encoded slash (%2F); a path parameter cannot contain '/'.",
  backslash: "The request path holds a backslash, raw or encoded (%5C).",
  badEscape: "The request path holds a '%' that does not start a percent-encoded byte (%XX).",
  escapedUnreserved: "The request path percent-encodes a letter, a digit or one of '-', '.', '_', '~'; send it as it is.",
  unencoded: "The request path holds a character that must be percent-encoded (a space, a quote, <, >, `, {, }, #, a control or a non-ASCII character)."
} as const

/** What URLs percent-encode in a path, so that a path passing `pathRefusal` is its own normal form. */
const mustBeEncoded = (code: number) =>
  code <= 0x20 || code >= 0x7f || code === 0x22 || code === 0x23 || code === 0x3c || code === 0x3e || code === 0x60 || code === 0x7b || code === 0x7d

/** RFC 3986's unreserved characters: letters, digits, `-`, `.`, `_`, `~`. Their escapes only disguise them. */
const isUnreserved = (code: number) =>
  (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) ||
  code === 0x2d || code === 0x2e || code === 0x5f || code === 0x7e

const isHex = (code: number) => (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x46) || (code >= 0x61 && code <= 0x66)

/**
 * Why a raw request path is refused (the `detail` of a 400 INVALID_REQUEST), or `undefined`. A path
 * that passes is read the same way by every party: the WHATWG URL parser (the gateway, the
 * services' assertion check), find-my-way, and whatever proxy sits in between leave it as it is;
 * so the path the gateway checks, signs and forwards is the path the service routes.
 */
export const pathRefusal = (path: string): string | undefined => {
  if (!path.startsWith("/")) return PathRefusals.notAPath
  let escapedDot = false
  for (let i = 0; i < path.length; i++) {
    const code = path.charCodeAt(i)
    if (code === 0x3b) return PathRefusals.semicolon
    if (code === 0x5c) return PathRefusals.backslash
    if (code === 0x25) {
      if (!isHex(path.charCodeAt(i + 1)) || !isHex(path.charCodeAt(i + 2))) return PathRefusals.badEscape
      const byte = path.slice(i + 1, i + 3).toUpperCase()
      if (byte === "2F") return PathRefusals.encodedSlash
      if (byte === "5C") return PathRefusals.backslash
      // find-my-way decodes literal segments before matching them, the gateway's allow-list does
      // not: `%73tats` would be `stats` for one and a parameter for the other.
      if (byte === "2E") escapedDot = true
      else if (isUnreserved(parseInt(byte, 16))) return PathRefusals.escapedUnreserved
      i += 2
    } else if (mustBeEncoded(code)) {
      return PathRefusals.unencoded
    }
  }
  for (const segment of path.split("/")) {
    const plain = segment.replace(/%2e/gi, ".")
    if (plain === "." || plain === "..") return PathRefusals.dotSegment
  }
  return escapedDot ? PathRefusals.escapedUnreserved : undefined
}

/**
 * Whether a Content-Type names JSON as the endpoints read it: `application/json` (or another of
 * `mediaTypes`, such as SCIM's `application/scim+json`), with at most a `charset` that is UTF-8
 * (RFC 8259 allows no other). Other `+json` types are not: the HttpApi decoder would not parse
 * them as JSON, and no contract advertises one.
 */
export const isJsonContentType = (contentType: string | undefined, mediaTypes: ReadonlyArray<string> = ["application/json"]): boolean => {
  if (contentType === undefined) return false
  const [mediaType = "", ...parameters] = contentType.split(";")
  if (!mediaTypes.includes(mediaType.trim().toLowerCase())) return false
  return parameters.every((parameter) => {
    if (parameter.trim() === "") return true
    const equals = parameter.indexOf("=")
    if (equals <= 0) return false
    const name = parameter.slice(0, equals).trim().toLowerCase()
    const value = parameter.slice(equals + 1).trim().replace(/^"(.*)"$/, "$1").toLowerCase()
    return name !== "charset" || value === "utf-8"
  })
}

/**
 * Whether a JSON text nests arrays and objects deeper than `max`, brackets inside strings aside.
 * One pass, no allocation, stopping at the first level too deep: it runs before the parser, on
 * text the parser may yet refuse.
 */
export const exceedsJsonDepth = (text: string, max: number): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (inString) {
      if (code === 0x5c) i++
      else if (code === 0x22) inString = false
    } else if (code === 0x22) {
      inString = true
    } else if (code === 0x5b || code === 0x7b) {
      if (++depth > max) return true
    } else if (code === 0x5d || code === 0x7d) {
      depth--
    }
  }
  return false
}

type Headers = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
const header = (headers: Headers, name: string) => {
  const value = headers[name]
  return typeof value === "string" ? value : undefined
}

/** Whether a request carries a body, as node frames it: a positive Content-Length or a Transfer-Encoding. */
export const carriesBody = (headers: Headers): boolean =>
  headers["transfer-encoding"] !== undefined || Number(header(headers, "content-length") ?? "0") > 0

export interface Refusal {
  readonly errorCode: ErrorCode
  readonly detail: string
}

const tooLarge: Refusal = { errorCode: "PAYLOAD_TOO_LARGE", detail: `The request body exceeds ${MaxBodyBytes} bytes.` }

/** A declared body over the limit, refused unread whatever the route: no port takes one. */
export const declaredSizeRefusal = (headers: Headers): Refusal | undefined =>
  Number(header(headers, "content-length") ?? "0") > MaxBodyBytes ? tooLarge : undefined

/** A body sent to an endpoint that takes JSON, in another media type. */
export const mediaTypeRefusal = (headers: Headers): Refusal | undefined => {
  const contentType = header(headers, "content-type")
  if (isJsonContentType(contentType)) return undefined
  return {
    errorCode: "UNSUPPORTED_MEDIA_TYPE",
    detail: contentType === undefined
      ? "The request body has no Content-Type; this endpoint takes application/json."
      : `This endpoint takes application/json, not '${contentType.slice(0, 100)}'.`
  }
}

/** What a JSON body's text refuses once read. */
export const jsonTextRefusal = (text: string): Refusal | undefined =>
  exceedsJsonDepth(text, MaxJsonDepth)
    ? { errorCode: "INVALID_REQUEST", detail: `The JSON body nests arrays and objects deeper than ${MaxJsonDepth} levels.` }
    : undefined

/**
 * The endpoints of `api` that take a JSON body, matched by find-my-way with the servers' own
 * settings, so that whatever path the router would send to such an endpoint (other case, trailing
 * slash, encoded letters) is checked here too.
 */
export const jsonBodyEndpoints = (api: HttpApi.Constraint) => {
  const router = FindMyWay.make<string>(RouterConfig)
  HttpApi.reflect(api as HttpApi.Top, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      const json = Array.from(endpoint.payload.values()).some(({ encoding }) => encoding._tag === "Json")
      if (json && HttpMethod.hasBody(endpoint.method)) router.on(endpoint.method, endpoint.path as FindMyWay.PathInput, endpoint.path)
    }
  })
  /** The declared path of the JSON endpoint `url` reaches, if it reaches one. */
  return (method: string, url: string): string | undefined => router.find(method, url)?.handler
}

/**
 * Reads the body the HttpApi is about to decode, within the limit. The text is kept by the request,
 * so the decoder parses it without a second read. Without a declared length, a failed read is the
 * limit (or a client that left and reads nothing): node then cuts the connection, the request
 * stream being destroyed; behind the gateway, which caps bodies at the same size, it cannot happen.
 */
const readJsonBody = (request: HttpServerRequest.HttpServerRequest) =>
  request.text.pipe(
    Effect.provideService(HttpIncomingMessage.MaxBodySize, MaxBodySize),
    Effect.result,
    Effect.map(Result.match({
      onFailure: (): Refusal =>
        header(request.headers, "content-length") === undefined
          ? tooLarge
          : { errorCode: "INVALID_REQUEST", detail: "The request body could not be read." },
      onSuccess: jsonTextRefusal
    }))
  )

/** Whether the request's assertion would open for `route` (its body aside); no verifier: no check to make. */
const assertionHolds = (request: HttpServerRequest.HttpServerRequest, route: string) =>
  Effect.gen(function*() {
    const verifier = yield* Effect.serviceOption(AssertionVerifier)
    if (Option.isNone(verifier)) return true
    const audience = audienceOfRoute(request.method, route)
    if (audience === undefined) return false
    const opened = verifier.value.open(request.headers[AssertionHeader], { audience, method: request.method, target: requestTarget(request) }, yield* Clock.currentTimeMillis)
    return Result.isSuccess(opened)
  })

/**
 * The guards of an HttpApi server, wrapped around its app (inside the access log, so that refusals
 * are logged), in this order: a refused path is a 400 for any request; a declared body over
 * `MaxBodyBytes` is a 413 for any request; a body sent to an endpoint that takes JSON must pass
 * `mediaTypeRefusal`, then, once its assertion holds, is read (within the limit) and must pass
 * `jsonTextRefusal`. Other bodies (the magic-link page's form, bodies of endpoints that take none)
 * are left to their route, every read of the request being bounded by `MaxBodyBytes` too.
 * `instance` is the path as sent.
 */
export const guardRequests = (api: HttpApi.Constraint) => {
  const takesJson = jsonBodyEndpoints(api)
  const bodyRefusal = (request: HttpServerRequest.HttpServerRequest) =>
    Effect.gen(function*() {
      const route = carriesBody(request.headers) ? takesJson(request.method, request.url) : undefined
      if (route === undefined) return undefined
      const refusal = mediaTypeRefusal(request.headers)
      if (refusal !== undefined) return refusal
      // Only a request whose assertion holds (signature, lifetime, audience, target) gets its body
      // read here: a stranger must not make a service buffer a megabyte. Authentication refuses the
      // others, without reading, and checks the body's digest and the single use.
      return (yield* assertionHolds(request, route)) ? yield* readJsonBody(request) : undefined
    })
  return HttpMiddleware.make((app) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const { path } = targetParts(request.url)
      const badPath = pathRefusal(path)
      const refusal = badPath !== undefined
        ? { errorCode: "INVALID_REQUEST" as const, detail: badPath }
        : declaredSizeRefusal(request.headers) ?? (yield* bodyRefusal(request))
      if (refusal === undefined) return yield* Effect.provideService(app, HttpIncomingMessage.MaxBodySize, MaxBodySize)
      return problemResponse(yield* ErrorsUrl, refusal.errorCode, refusal.detail, path)
    })
  )
}
