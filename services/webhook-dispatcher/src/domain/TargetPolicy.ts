import { addressProblem, hostProblem } from "@portfolio/platform/security"

// Judged by the platform's rules, shared with the identity providers' client.
export { addressProblem, hostProblem }

/**
 * Where a webhook may be sent (docs/product-rules.md#webhooks): https only, and never to an address
 * of this machine, of a private network or of a cloud's metadata service. These functions judge
 * what can be judged without the network: the URL, an IP-literal host, a name that can only be
 * local, and any address the resolver answers (the delivery client checks those at connection
 * time, so that a name re-pointed after the subscription was accepted still cannot pass).
 */
export interface TargetPolicyOptions {
  /** Local use and tests only: allows `http` and every address. */
  readonly allowPrivateTargets: boolean
}

/** Why a URL was refused: the URL itself, or its host (`host` without IPv6 brackets). */
export type TargetRefusal =
  | { readonly _tag: "Url"; readonly detail: string }
  | { readonly _tag: "Host"; readonly host: string; readonly reason: string }

/** The refusal of an already parsed URL, or `undefined` when it may be sent to. */
export const targetRefusal = (url: URL, options: TargetPolicyOptions): TargetRefusal | undefined => {
  if (url.protocol !== "https:" && !(options.allowPrivateTargets && url.protocol === "http:")) {
    return { _tag: "Url", detail: options.allowPrivateTargets ? "the scheme must be https or http" : "the scheme must be https" }
  }
  // A URL is shown in listings and delivery logs: a secret inside it would leak there.
  if (url.username !== "" || url.password !== "") return { _tag: "Url", detail: "credentials in the URL are refused" }
  if (options.allowPrivateTargets) return undefined
  const reason = hostProblem(url.hostname)
  if (reason === undefined) return undefined
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname
  return { _tag: "Host", host, reason }
}

/**
 * The reason a subscription's URL is refused, written for a 400's detail, or `undefined` when it
 * is accepted (docs/product-rules.md#webhooks).
 */
export const targetUrlProblem = (url: string, options: TargetPolicyOptions): string | undefined => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return "not a URL"
  }
  const refusal = targetRefusal(parsed, options)
  if (refusal === undefined) return undefined
  return refusal._tag === "Url" ? refusal.detail : `the host ${refusal.host} is not allowed: ${refusal.reason}`
}
