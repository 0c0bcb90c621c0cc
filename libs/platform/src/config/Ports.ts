/**
 * The ports each service listens on when `PORT` (its API) and `ADMIN_PORT` (its admin API, never
 * routed by the gateway) are not set: the local system, the chart and the CLI's defaults agree on them.
 */
export const DefaultPorts = {
  gateway: { api: 8080, admin: 8081 },
  referential: { api: 8082, admin: 8083 },
  provisioning: { api: 8084, admin: 8085 },
  // The dispatcher has no API of its own beside its admin one: `api` is reserved, never listened on.
  "webhook-dispatcher": { api: 8086, admin: 8087 },
  // The console's pages on `api` (under /console), its probes and metrics on `admin`.
  console: { api: 8088, admin: 8089 }
} as const

export type ServiceName = keyof typeof DefaultPorts
