import { HttpServerRequest } from "effect/http"
import { clientAddress, saneRequestId, targetParts } from "@portfolio/platform/http"
import { Option } from "effect"
import { randomUUID } from "node:crypto"
import type http from "node:http"

/** A request as either side of the public port sees it: the node hot path, or the Effect app. */
export type ClientRequest = http.IncomingMessage | HttpServerRequest.HttpServerRequest

const headerOf = (request: ClientRequest, name: string): string | undefined => {
  const value = request.headers[name]
  return typeof value === "string" ? value : undefined
}

/** The client's X-Request-Id when it is a sane token, else a fresh one. */
export const requestIdOf = (request: ClientRequest): string => saneRequestId(headerOf(request, "x-request-id")) ?? randomUUID()

/**
 * The client's address: the socket's peer, or, behind `trustedProxyHops` reverse proxies, the
 * entry of X-Forwarded-For that the outermost trusted proxy appended.
 */
export const clientAddressOf = (request: ClientRequest, trustedProxyHops: number): string =>
  clientAddress(
    HttpServerRequest.TypeId in request ? Option.getOrUndefined(request.remoteAddress) : request.socket.remoteAddress,
    headerOf(request, "x-forwarded-for"),
    trustedProxyHops
  )

export const isUnder = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`)

export interface RequestTarget {
  /** The path as sent, without the query string (`pathRefusal` decides whether it is taken). */
  readonly path: string
  /** The query string with its `?`, or "". */
  readonly search: string
}

/**
 * Path and query of a request target in origin form (`/path?query`) or in the absolute form that
 * RFC 9112 asks servers to accept (`http(s)://host/path?query`); `undefined` for anything else.
 * Never throws: the target is whatever the client sent, and `new URL` throws on much of that
 * (`http://[bad/x`, `http://x:abc/`), which in a node request listener would end the process.
 * `new URL` only validates: path and query are kept as sent, so that what the gateway matches,
 * signs and forwards is what it received (docs/product-rules.md#errors).
 */
export const parseRequestTarget = (raw: string | undefined): RequestTarget | undefined => {
  if (raw === undefined || raw.length === 0) return undefined
  // Origin form (`/path?query`, `//host/x` included, which is a path): nothing to validate.
  if (raw.startsWith("/")) return targetParts(raw)
  try {
    const url = new URL(raw)
    if (url.protocol !== "http:" && url.protocol !== "https:") return undefined
    return targetParts(raw)
  } catch {
    return undefined
  }
}
