import { Schema } from "effect"
import { Email } from "./Provisioning.js"
import { ArbRole } from "./Role.js"
import { InputText, withoutControls } from "./Text.js"
import { DateTimeUtc, Uuid, withDefault } from "./Wire.js"

/**
 * A tenant's single sign-on connection: the OpenID Provider its people sign in with
 * (docs/security.md, "Single sign-on"). Its client secret is written, never read back.
 */

/** An e-mail domain the connection may sign in: lowercase DNS labels, at least two. */
export const SsoDomain = Schema.String.pipe(
  Schema.check(Schema.isMaxLength(253)),
  Schema.check(Schema.isPattern(/^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/u)),
  Schema.annotate({ identifier: "SsoDomain", description: "A lowercase e-mail domain, such as example.com." })
)

/** The issuer identifier as the provider's discovery document states it, without a query or fragment. */
export const IssuerUrl = Schema.String.pipe(
  Schema.check(Schema.isMinLength(1)),
  Schema.check(Schema.isMaxLength(2048)),
  withoutControls({ lineBreaks: false }),
  Schema.annotate({ identifier: "IssuerUrl", format: "uri" })
)

/** One value of the role claim (such as a group name) and the role it gives. */
export const SsoRoleMapping = Schema.Struct({
  value: InputText.pipe(Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(255))),
  role: ArbRole
}).annotate({ identifier: "SsoRoleMapping" })

const ClientId = InputText.pipe(Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(255)), withoutControls({ lineBreaks: false }))
const ClaimName = Schema.String.pipe(Schema.check(Schema.isPattern(/^[A-Za-z0-9_.:-]{1,100}$/u)))

/** What an operator or a tenant-admin sets; the whole connection each time, the secret included. */
export class SsoConnectionRequest extends Schema.Class<SsoConnectionRequest>("SsoConnectionRequest")({
  issuer: IssuerUrl,
  clientId: ClientId,
  clientSecret: Schema.RedactedFromValue(InputText.pipe(Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(1024)))),
  domains: Schema.Array(SsoDomain).pipe(Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(50))),
  defaultRole: ArbRole.pipe(withDefault("viewer")),
  roleClaim: Schema.NullOr(ClaimName).pipe(withDefault(null)),
  roleMap: Schema.Array(SsoRoleMapping).pipe(Schema.check(Schema.isMaxLength(100)), withDefault([])),
  required: Schema.Boolean.pipe(withDefault(false)),
  breakGlass: Schema.Array(Email).pipe(Schema.check(Schema.isMaxLength(20)), withDefault([])),
  /**
   * The id token's claim that says the provider verified the e-mail: `email_verified` (OpenID
   * Connect's; Okta, Google, Keycloak), or `xms_edov` for Microsoft Entra ID, which has none of the
   * standard one.
   */
  emailVerifiedClaim: ClaimName.pipe(withDefault("email_verified"))
}) {}

/** A connection as read back: everything but the secret, with the address to register at the provider. */
export class SsoConnection extends Schema.Class<SsoConnection>("SsoConnection")({
  tenantId: Uuid,
  issuer: Schema.String,
  clientId: Schema.String,
  /** Where the provider sends the browser back; registered at the provider as the client's redirect URI. */
  redirectUri: Schema.String,
  domains: Schema.Array(Schema.String),
  defaultRole: ArbRole,
  roleClaim: Schema.NullOr(Schema.String),
  roleMap: Schema.Array(SsoRoleMapping),
  required: Schema.Boolean,
  breakGlass: Schema.Array(Schema.String),
  emailVerifiedClaim: Schema.String,
  /**
   * Whether an operator vouches for the domains (set by an operator, or confirmed by one): only
   * then does a work e-mail of them lead to this workspace at the console's sign-in.
   */
  domainsConfirmed: Schema.Boolean,
  /** When the client secret was last written: it is never shown again. */
  secretSetAt: DateTimeUtc,
  updatedAt: DateTimeUtc
}) {}

/** A work e-mail typed at the console's sign-in, to find the workspaces whose provider signs in its domain. */
export class SsoDomainLookup extends Schema.Class<SsoDomainLookup>("SsoDomainLookup")({
  email: Email
}) {}

/** The slugs of the tenants whose connection lists the e-mail's domain, in order; none for a domain no connection lists. */
export class SsoDomainTenants extends Schema.Class<SsoDomainTenants>("SsoDomainTenants")({
  slugs: Schema.Array(Schema.String)
}) {}

/**
 * A sign-in through the tenant's provider, begun: where to send the browser, and the `state` it
 * will bring back, which the console binds to that browser (a cookie) before sending it.
 */
export class SsoSignInStart extends Schema.Class<SsoSignInStart>("SsoSignInStart")({
  authorizationUrl: Schema.String,
  state: Schema.String
}) {}

/** The browser back from the provider: the `state` the console's cookie holds, and the whole callback URL as received. */
export class SsoSignInCompletion extends Schema.Class<SsoSignInCompletion>("SsoSignInCompletion")({
  state: Schema.String.pipe(Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(256))),
  callbackUrl: Schema.String.pipe(Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(8192)))
}) {}
