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
