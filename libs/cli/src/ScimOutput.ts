import { PublicApiPrefix, ScimPath, ScimToken, ScimTokenWithSecret, type Tenant } from "@portfolio/domain"
import { DateTime, Schema } from "effect"
import { encodeJson, type Output } from "./Output.js"

/**
 * The scim commands' answers. `--json` prints the tokens as the contract encodes them (the token
 * itself in creation's answer only), with the tenant's slug beside its id.
 */

const iso = DateTime.formatIso
const encodeToken = encodeJson(ScimToken)
const encodeTokens = encodeJson(Schema.Array(ScimToken))
const encodeCreated = encodeJson(ScimTokenWithSecret)

/** The CLI knows no public address of the API, only the path the identity tool needs after it. */
const scimBaseHint = `Paste it in the identity tool with the SCIM base URL <public API base URL>${ScimPath} (<the gateway's address>${PublicApiPrefix}${ScimPath}).`

/** A label is the maker's free text: quoted, so that its spaces and its end read plainly. */
const quoted = (label: string) => JSON.stringify(label)

export const scimTokenCreated = ({ tenant, token }: { readonly tenant: Tenant; readonly token: ScimTokenWithSecret }): Output => ({
  json: Object.assign({}, encodeCreated(token), { tenant: tenant.slug }),
  human: [
    `SCIM token ${quoted(token.label)} created in ${tenant.slug}:`,
    "",
    `  ${token.token}`,
    "",
    `  id:     ${token.id}`,
    `  prefix: ${token.tokenPrefix}`,
    `  label:  ${token.label}`,
    "",
    scimBaseHint,
    "It is shown this once; store it now."
  ]
})

const stateOf = (t: ScimToken) => (t.revokedAt === null ? "active " : "revoked")

const line = (t: ScimToken) =>
  `${t.id}  ${t.tokenPrefix}  ${stateOf(t)}  label ${quoted(t.label)}  created ${iso(t.createdAt)} by ${t.createdBy}` +
  `  last used ${t.lastUsedAt === null ? "never" : iso(t.lastUsedAt)}` +
  (t.revokedAt === null ? "" : `  revoked ${iso(t.revokedAt)}`)

export const scimTokensListed = ({ tenant, tokens }: { readonly tenant: Tenant; readonly tokens: ReadonlyArray<ScimToken> }): Output => ({
  json: encodeTokens(tokens),
  human: tokens.length === 0 ? [`No SCIM token in ${tenant.slug}.`] : tokens.map(line)
})

export const scimTokenRevoked = ({ tenant, token }: { readonly tenant: Tenant; readonly token: ScimToken }): Output => ({
  json: Object.assign({}, encodeToken(token), { tenant: tenant.slug }),
  human: [
    `SCIM token ${token.id} (${token.tokenPrefix}, ${quoted(token.label)}) of ${tenant.slug} revoked` +
    `${token.revokedAt === null ? "" : ` at ${iso(token.revokedAt)}`}: the identity tool holding it is refused within a second.`
  ]
})
