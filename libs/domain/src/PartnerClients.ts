import { Schema } from "effect"
import { Scope } from "./Role.js"
import { DateTimeUtc, Uuid, withDefault } from "./Wire.js"

/**
 * Partner clients: OAuth 2.0 client credentials (RFC 6749 section 4.4) for long-term partners,
 * administered by operators on the gateway's admin API (docs/product-rules.md#partner-clients).
 */

/** What an operator names a partner: a slug, as a tenant's, unique in its tenant. */
export const PartnerName = Schema.String.pipe(
  Schema.check(Schema.isPattern(/^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/u)),
  Schema.annotate({ identifier: "PartnerName", description: "Lowercase letters, digits and '-', 1 to 40 characters." })
)

export const PartnerClientIdPrefix = "service-partner-"

/**
 * The client's identifier on the token endpoint: `service-partner-<name>-<8 random characters>`,
 * unique in the deployment (docs/security.md, "Partner client ids"). Clients registered before the
 * suffix keep their `service-partner-<name>`, which this grammar accepts too.
 */
export const PartnerClientId = Schema.String.pipe(
  Schema.check(Schema.isPattern(/^service-partner-[a-z0-9](?:[a-z0-9-]{0,47}[a-z0-9])?$/u)),
  Schema.annotate({
    identifier: "PartnerClientId",
    description: "service-partner-<name>-<8 random lowercase letters and digits>, given at creation."
  })
)

export const PartnerClientState = Schema.Literals(["enabled", "disabled"])

/** The longest grace a rotation keeps the previous secret valid: a week, as for webhook secrets. */
export const PartnerSecretMaxGraceSeconds = 7 * 24 * 3600

export class PartnerClient extends Schema.Class<PartnerClient>("PartnerClient")({
  clientId: PartnerClientId,
  tenantId: Uuid,
  name: PartnerName,
  scope: Scope.annotate({ description: "The most its tokens may carry; `write` includes `read`." }),
  state: PartnerClientState,
  previousSecretExpiresAt: Schema.NullOr(DateTimeUtc).annotate({
    description: "While set and in the future, the secret before the last rotation is accepted too."
  }),
  createdAt: DateTimeUtc,
  updatedAt: DateTimeUtc
}) {}

/** A client with its secret: answered once, at creation and at each rotation. */
export class PartnerClientWithSecret extends Schema.Class<PartnerClientWithSecret>("PartnerClientWithSecret")({
  ...PartnerClient.fields,
  clientSecret: Schema.String.annotate({ description: "ap_cs_ + 40 base62 + 6 base62 of a CRC32; shown once, store it now." })
}) {}

export class CreatePartnerClientRequest extends Schema.Class<CreatePartnerClientRequest>("CreatePartnerClientRequest")({
  name: PartnerName,
  scope: Scope
}) {}

/** Grace of the previous secret after a rotation, in seconds: 0 to 7 days, 24 h by default. */
export class RotatePartnerSecretRequest extends Schema.Class<RotatePartnerSecretRequest>("RotatePartnerSecretRequest")({
  graceSeconds: Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 0, maximum: PartnerSecretMaxGraceSeconds })), withDefault(24 * 3600))
}) {}
