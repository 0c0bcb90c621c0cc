import { SsoConnection } from "@portfolio/domain"
import { DateTime } from "effect"
import { encodeJson, type Output } from "./Output.js"

/**
 * The sso commands' answers: `--json` prints the connection as the contract encodes it, which has
 * no client secret to print. For a person, the redirect URI comes first and alone on its line:
 * every provider's client set-up asks for it, and it is copied from here.
 */

const iso = DateTime.formatIso
const encodeConnection = encodeJson(SsoConnection)

const none = (values: ReadonlyArray<string>) => (values.length === 0 ? "(none)" : values.join(", "))

const roleLines = (c: SsoConnection): Array<string> => {
  if (c.roleClaim === null) return [`  role claim:    (none): everyone signs in as ${c.defaultRole}`]
  const [first, ...rest] = c.roleMap.map((m) => `${m.value} -> ${m.role}`)
  return [
    `  role claim:    ${c.roleClaim}`,
    `  role map:      ${first ?? `(none): everyone signs in as ${c.defaultRole}`}`,
    ...rest.map((mapping) => `                 ${mapping}`)
  ]
}

const requiredText = (c: SsoConnection) => {
  if (!c.required) return "no: people of these domains may also sign in with a password"
  const only = "yes: people of these domains sign in only through the provider"
  return c.breakGlass.length === 0 ? only : `${only}, the break-glass accounts excepted`
}

const connectionLines = (c: SsoConnection): Array<string> => [
  `Redirect URI, to register at the provider for client ${c.clientId}:`,
  "",
  `  ${c.redirectUri}`,
  "",
  `  issuer:        ${c.issuer}`,
  `  client id:     ${c.clientId}`,
  `  client secret: set ${iso(c.secretSetAt)}, never shown`,
  `  domains:       ${c.domains.join(", ")}`,
  `  default role:  ${c.defaultRole}${c.roleClaim === null ? "" : " (when no mapping matches)"}`,
  ...roleLines(c),
  `  required:      ${requiredText(c)}`,
  `  break-glass:   ${none(c.breakGlass)}`,
  `  e-mail verified by: ${c.emailVerifiedClaim}`,
  `  domains confirmed: ${c.domainsConfirmed ? "yes: a work e-mail of them finds this workspace at sign-in" : "no: people give the workspace's name (portfolio sso confirm-domains)"}`,
  `  tenant id:     ${c.tenantId}`,
  `  updated:       ${iso(c.updatedAt)}`
]

export const ssoSet = (tenant: string) => (connection: SsoConnection): Output => ({
  json: encodeConnection(connection),
  human: [`Single sign-on of ${tenant} set: its people sign in through ${connection.issuer}.`, ...connectionLines(connection)]
})

export const ssoShown = (tenant: string) => (connection: SsoConnection): Output => ({
  json: encodeConnection(connection),
  human: [`Single sign-on of ${tenant}, through ${connection.issuer}.`, ...connectionLines(connection)]
})

export const ssoDisabled = (tenant: string): Output => ({
  json: { tenant, disabled: true },
  human: [`Single sign-on of ${tenant} disabled: its connection and client secret are deleted; its people sign in with passwords again.`]
})

export const ssoDomainsConfirmed = (tenant: string) => (connection: SsoConnection): Output => ({
  json: encodeConnection(connection),
  human: [`Domains of ${tenant} confirmed: a work e-mail of ${connection.domains.join(", ")} finds this workspace at sign-in.`]
})
