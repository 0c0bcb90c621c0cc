import { guardedLookup, hostProblem } from "@portfolio/platform/security"
import { lookup } from "node:dns"
import type * as openid from "openid-client"
import { Agent, fetch } from "undici"

/** A provider's address that is not public: the error code `describeFailure` words for the operator. */
export const NotPublic = "EADDRNOTPUBLIC"

const notPublic = (what: string, reason: string) => Object.assign(new Error(`${what} is not a public address (${reason})`), { code: NotPublic })

/**
 * Every request to a tenant's provider (discovery, token endpoint, keys) goes only to public
 * addresses (docs/security.md, "Single sign-on"): whoever sets a connection names the issuer, and
 * the issuer's document names the other endpoints, so without this a connection could make
 * provisioning call into the cluster's network and tell, by its answer, what lives there. The host
 * is judged before the request (an IP literal connects without any lookup), and the addresses its
 * name resolves to when the socket connects (a name re-pointed after it was accepted too).
 * `allowLoopback`: a provider on this machine, for `npm start` and the tests.
 */
const agents = new Map<boolean, Agent>()

const agentFor = (allowLoopback: boolean) => {
  let agent = agents.get(allowLoopback)
  if (agent === undefined) {
    agent = new Agent({
      connect: {
        lookup: guardedLookup(lookup, (hostname, address, reason) => notPublic(`${hostname} (${address})`, reason), (reason) => allowLoopback && reason === "loopback")
      }
    })
    agents.set(allowLoopback, agent)
  }
  return agent
}

export const guardedFetch = (allowLoopback: boolean): openid.CustomFetch => (url, options) => {
  const hostname = new URL(url).hostname
  const reason = hostProblem(hostname)
  if (reason !== undefined && !(allowLoopback && reason === "loopback")) return Promise.reject(notPublic(hostname, reason))
  // undici's own fetch, for its dispatcher: the one node bundles is another copy of undici.
  return fetch(url, { ...options, dispatcher: agentFor(allowLoopback) } as Parameters<typeof fetch>[1]) as unknown as Promise<Response>
}
