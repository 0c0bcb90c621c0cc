const requestIdShape = /^[A-Za-z0-9._:-]{1,128}$/

/** The client's X-Request-Id when it is a sane token, else a fresh one. */
export const requestIdOf = (incoming: string | undefined, fresh: () => string): string =>
  incoming !== undefined && requestIdShape.test(incoming) ? incoming : fresh()

/**
 * The client's address: the socket's peer, or, behind `hops` trusted reverse proxies, the entry
 * of X-Forwarded-For that the outermost trusted proxy appended.
 */
export const clientAddress = (peer: string | undefined, forwardedFor: string | undefined, hops: number): string => {
  const socketPeer = peer ?? "unknown"
  if (hops === 0) return socketPeer
  const forwarded = (forwardedFor ?? "").split(",").map((s) => s.trim()).filter((s) => s.length > 0)
  return forwarded[forwarded.length - hops] ?? socketPeer
}

export const isUnder = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`)

export interface RequestTarget {
  /** The path, dot segments resolved, without the query string. */
  readonly path: string
  /** The query string with its `?`, or "". */
  readonly search: string
}

/**
 * Path and query of a request target in origin form (`/path?query`) or in the absolute form that
 * RFC 9112 asks servers to accept (`http(s)://host/path?query`); `undefined` for anything else.
 * Never throws: the target is whatever the client sent, and `new URL` throws on much of that
 * (`http://[bad/x`, `http://x:abc/`), which in a node request listener would end the process.
 */
export const parseRequestTarget = (raw: string | undefined): RequestTarget | undefined => {
  if (raw === undefined || raw.length === 0) return undefined
  try {
    // Appended to an origin rather than resolved against a base: in origin form `//host/x` is a
    // path, and resolving would read `host` as an authority and route `/x`.
    const url = raw.startsWith("/") ? new URL(`http://gateway.invalid${raw}`) : new URL(raw)
    if (url.protocol !== "http:" && url.protocol !== "https:") return undefined
    return { path: url.pathname, search: url.search }
  } catch {
    return undefined
  }
}
