import { HttpServerRequest } from "effect/http"
import { requestOrigin } from "@portfolio/platform/http"
import { Effect } from "effect"
import { ProvisioningSettings } from "../../Config.js"

const originBehind = (trustedProxyHops: number) => Effect.map(HttpServerRequest.HttpServerRequest, (request) => requestOrigin(request, trustedProxyHops))

/**
 * Who sent a request of the public port, for the security log: the socket's peer, or behind
 * `TRUSTED_PROXY_HOPS` proxies (the ingress in front of the acceptance page, the gateway in front of
 * the API, which forwards the client's address in X-Forwarded-For) the entry the outermost of them
 * appended, as the gateway and the console read it; and a user agent cut to a length the log keeps.
 */
export const publicOrigin = Effect.flatMap(ProvisioningSettings, ({ trustedProxyHops }) => originBehind(trustedProxyHops))

/**
 * Who sent a request of the admin port: its socket's peer, since no proxy stands in front of that
 * port and an X-Forwarded-For there is only the caller's claim.
 */
export const adminOrigin = originBehind(0)
