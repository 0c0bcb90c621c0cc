import { CallerIdentity } from "@portfolio/domain"
import { signAssertion } from "@portfolio/platform/security"
import { type Reply, type RequestOptions, send } from "./http.js"

export type AdminService = "gateway" | "referential" | "provisioning" | "webhook-dispatcher"

/** Any UUID serves as the operator's tenant (the admin APIs take the tenant from the path). */
export const operatorIdentity = new CallerIdentity({
  tenantId: "00000000-0000-0000-0000-000000000000",
  subject: "operator:blackbox",
  role: "operator",
  scope: "admin"
})

/**
 * A request to `service`'s admin API at `baseUrl` with a fresh operator assertion for it, signed
 * over the path and query and the body as `send` will write them.
 */
export const adminCall = (secret: string, baseUrl: string, service: AdminService, method: string, path: string, options: Omit<RequestOptions, "method"> = {}): Promise<Reply> => {
  const body = options.body === undefined || typeof options.body === "string" ? options.body : JSON.stringify(options.body)
  const contentType = options.body === undefined || typeof options.body === "string" ? {} : { "content-type": "application/json" }
  // The target as fetch will send it: the URL parser's form of the path and query.
  const url = new URL(`${baseUrl}${path}`)
  const assertion = signAssertion(secret, operatorIdentity, { audience: service, method, target: `${url.pathname}${url.search}`, body })
  return send(url.href, {
    ...options,
    method,
    ...(body === undefined ? {} : { body }),
    headers: { ...contentType, ...options.headers, "x-portfolio-assertion": assertion }
  })
}
