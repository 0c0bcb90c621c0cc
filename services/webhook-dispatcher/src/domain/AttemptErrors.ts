import type { TargetRefusal } from "./TargetPolicy.js"

/**
 * The words of a POST that got no answer, twice: `error`, recorded with the attempt, is what the
 * tenant reads (the attempts of the admin API, the console, `portfolio webhook attempts`, the mail
 * of a disabling); `detail` goes to the operator's log only. A tenant chooses the names its
 * subscriptions point at, so `error` never holds an address nor a message of node's, which may name
 * one: what a name resolves to inside the cluster is the operator's to know (docs/security.md,
 * "Outbound addresses"). `error` stays short and stable: operators count attempts by it.
 */
export interface AttemptError {
  readonly error: string
  readonly detail: string
}

/** What a tenant reads of a target the address policy refused, whichever address and however resolved. */
export const RefusedAddress = "refused: the address is not public"

/** Whether the address policy refused the target, rather than the target failing: no connection was made. */
export const isRefusal = (error: string) => error.startsWith("refused: ")

const RefusedTargetCode = "ERR_WEBHOOK_REFUSED_TARGET"

/** The error a connection's lookup answers for an address the policy refuses: its message is for the operator. */
export class RefusedTarget extends Error {
  readonly code = RefusedTargetCode
  constructor(readonly hostname: string, readonly address: string, readonly reason: string) {
    super(`refused target ${address} (resolved from ${hostname}): ${reason}`)
  }
}

/** A URL refused before any connection (the policy checks it again at each attempt). */
export const refusalOf = (refusal: TargetRefusal): AttemptError =>
  refusal._tag === "Host"
    ? { error: RefusedAddress, detail: `refused target ${refusal.host}: ${refusal.reason}` }
    : { error: `refused: ${refusal.detail}`, detail: `refused target: ${refusal.detail}` }

/** A failure with the same words for both: a timeout, an interruption. */
export const plainError = (error: string): AttemptError => ({ error, detail: error })

const timeoutCodes = new Set(["UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT", "ETIMEDOUT"])
const connectionErrors: Readonly<Record<string, string>> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  EPIPE: "connection reset",
  UND_ERR_SOCKET: "connection closed",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  EADDRNOTAVAIL: "address not available",
  UND_ERR_HEADERS_OVERFLOW: "http: headers too large"
}
const dnsCodes = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_FAIL", "ENODATA", "ESERVFAIL", "EREFUSED", "ETIMEOUT"])
const tlsCode = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH|EPROTO$|ERR_OSSL_)/
/** A code is a name node or undici gives a kind of failure, never a value: anything else is not one. */
const codeShape = /^[A-Z][A-Z0-9_]{1,63}$/

const codeOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : undefined

/** The innermost error worth naming: undici and node sometimes wrap the one that matters. */
const rootError = (error: unknown): unknown => {
  let current = error
  for (let depth = 0; depth < 4; depth++) {
    if (codeOf(current) !== undefined) return current
    if (current instanceof AggregateError && current.errors.length > 0) current = current.errors[0]
    else if (current instanceof Error && current.cause !== undefined) current = current.cause
    else return current
  }
  return current
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 500)

/**
 * The words of an error node or undici reported for a POST: for the tenant, the kind of failure
 * and at most a code (`connection refused`, `dns: ENOTFOUND`, `tls: CERT_HAS_EXPIRED`); for the
 * operator, the message as reported (`connect ECONNREFUSED 10.1.2.3:443`).
 */
export const attemptErrorOf = (error: unknown, timeout: string): AttemptError => {
  const root = rootError(error)
  const code = codeOf(root)
  const detail = messageOf(root)
  if (code === RefusedTargetCode) return { error: RefusedAddress, detail }
  if (code === undefined || !codeShape.test(code)) return { error: "request failed", detail }
  if (timeoutCodes.has(code)) return { error: timeout, detail }
  const known = connectionErrors[code]
  if (known !== undefined) return { error: known, detail }
  const syscall = typeof root === "object" && root !== null && "syscall" in root ? root.syscall : undefined
  if (syscall === "getaddrinfo" || dnsCodes.has(code)) return { error: `dns: ${code}`, detail }
  if (tlsCode.test(code)) return { error: `tls: ${code}`, detail }
  if (code.startsWith("HPE_")) return { error: `http: ${code}`, detail }
  return { error: `error: ${code}`, detail }
}
