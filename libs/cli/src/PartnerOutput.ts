import { PartnerClient, type PartnerClientWithSecret, type Tenant } from "@portfolio/domain"
import { DateTime, Schema } from "effect"
import { encodeJson, type Output } from "./Output.js"

/**
 * The partner commands' answers. The credentials go out under their OAuth names (`client_id`,
 * `client_secret`: RFC 6749 section 2.3.1), the names a partner's OAuth library asks for.
 */

const iso = DateTime.formatIso
const encodeClients = encodeJson(Schema.Array(PartnerClient))

const credentials = (client: PartnerClientWithSecret, tenant: string | undefined) => ({
  client_id: client.clientId,
  client_secret: client.clientSecret,
  ...(tenant === undefined ? {} : { tenant }),
  tenantId: client.tenantId,
  scope: client.scope,
  state: client.state,
  previousSecretExpiresAt: client.previousSecretExpiresAt === null ? null : iso(client.previousSecretExpiresAt)
})

const secretLines = (client: PartnerClientWithSecret) => [
  `  client_id:     ${client.clientId}`,
  `  client_secret: ${client.clientSecret}`,
  "",
  "The secret is shown this once; store it now."
]

export const partnerCreated = ({ client, tenant }: { readonly tenant: Tenant; readonly client: PartnerClientWithSecret }): Output => ({
  json: credentials(client, tenant.slug),
  human: [`Partner client ${client.clientId} created in ${tenant.slug} (scope ${client.scope}).`, ...secretLines(client)]
})

export const partnerSecretRotated = (client: PartnerClientWithSecret): Output => ({
  json: credentials(client, undefined),
  human: [
    `Secret of partner client ${client.clientId} rotated.`,
    client.previousSecretExpiresAt === null
      ? "The previous secret is no longer accepted."
      : `The previous secret is accepted too until ${iso(client.previousSecretExpiresAt)}.`,
    ...secretLines(client)
  ]
})

const line = (c: PartnerClient) =>
  `${c.clientId}  ${c.state.padEnd(8)}  scope ${c.scope.padEnd(5)}  created ${iso(c.createdAt)}` +
  (c.previousSecretExpiresAt === null ? "" : `  previous secret until ${iso(c.previousSecretExpiresAt)}`)

export const partnersListed = ({ clients, tenant }: { readonly tenant: Tenant; readonly clients: ReadonlyArray<PartnerClient> }): Output => ({
  json: encodeClients(clients),
  human: clients.length === 0 ? [`No partner client in ${tenant.slug}.`] : clients.map(line)
})

export const partnerSwitched = (client: PartnerClient): Output => ({
  json: encodeJson(PartnerClient)(client),
  human: [
    client.state === "enabled"
      ? `Partner client ${client.clientId} enabled.`
      : `Partner client ${client.clientId} disabled: it gets no new token; those it holds expire within 5 minutes.`
  ]
})
