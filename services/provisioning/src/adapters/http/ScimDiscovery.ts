import {
  ArbRole,
  ScimMaxResults,
  ScimResourceTypeUrn,
  ScimSchemaUrn,
  ScimServiceProviderConfigUrn,
  ScimUserSchemaUrn
} from "@portfolio/domain"

/**
 * The discovery documents of RFC 7644 section 4 (docs/scim.md, "Discovery"): what this service
 * supports, fixed by its code. Each is completed with its `meta.location` where it is served.
 */

type Document = Readonly<Record<string, unknown>>

export const serviceProviderConfig: Document = {
  schemas: [ScimServiceProviderConfigUrn],
  patch: { supported: true },
  bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
  filter: { supported: true, maxResults: ScimMaxResults },
  changePassword: { supported: false },
  sort: { supported: false },
  etag: { supported: true },
  authenticationSchemes: [
    {
      type: "oauthbearertoken",
      name: "OAuth Bearer Token",
      description: "A tenant's SCIM token (ap_scim_...), made by a tenant-admin, sent as Authorization: Bearer.",
      primary: true
    }
  ]
}

export const UserResourceTypeId = "User"

/** Groups are not supported: User is the one resource type. */
export const userResourceType: Document = {
  schemas: [ScimResourceTypeUrn],
  id: UserResourceTypeId,
  name: "User",
  endpoint: "/Users",
  description: "A person provisioned in the tenant, or a member of it.",
  schema: ScimUserSchemaUrn,
  schemaExtensions: []
}

const text = (name: string, description: string, more: Document = {}): Document => ({
  name,
  type: "string",
  multiValued: false,
  description,
  required: false,
  caseExact: false,
  mutability: "readWrite",
  returned: "default",
  uniqueness: "none",
  ...more
})

const valueOf = (description: string, more: Document = {}) => text("value", description, { required: true, ...more })
const primary: Document = {
  name: "primary",
  type: "boolean",
  multiValued: false,
  description: "Always true: a User has one.",
  required: false,
  mutability: "readWrite",
  returned: "default"
}

/** The User schema (RFC 7643 section 7), with exactly the attributes this service keeps. */
export const userSchema: Document = {
  schemas: [ScimSchemaUrn],
  id: ScimUserSchemaUrn,
  name: "User",
  description: "A person provisioned in the tenant, or a member of it.",
  attributes: [
    text("userName", "Unique in the tenant, compared case-insensitively.", { required: true, uniqueness: "server" }),
    text("externalId", "The identity tool's own identifier of the person.", { caseExact: true }),
    {
      name: "name",
      type: "complex",
      multiValued: false,
      description: "The person's name.",
      required: false,
      mutability: "readWrite",
      returned: "default",
      subAttributes: [
        text("formatted", "The full name, as displayed."),
        text("familyName", "The family name."),
        text("givenName", "The given name.")
      ]
    },
    text("displayName", "The name shown for the person."),
    {
      name: "emails",
      type: "complex",
      multiValued: true,
      description: "One address, unique in the tenant: the primary one sent, else the first, else userName when it is an address. It cannot change while the person is an active member.",
      required: false,
      mutability: "readWrite",
      returned: "default",
      uniqueness: "server",
      subAttributes: [
        valueOf("The e-mail address."),
        text("type", "Always work.", { canonicalValues: ["work"] }),
        primary
      ]
    },
    {
      name: "active",
      type: "boolean",
      multiValued: false,
      description: "True exactly when the person is an active member of the tenant: false until an invitation is accepted; false removes the member.",
      required: false,
      mutability: "readWrite",
      returned: "default"
    },
    {
      name: "roles",
      type: "complex",
      multiValued: true,
      description: "One role of the product; none gives the single sign-on connection's default role, else viewer.",
      required: false,
      mutability: "readWrite",
      returned: "default",
      subAttributes: [
        valueOf("The role.", { canonicalValues: ArbRole.literals, caseExact: true }),
        text("display", "The role, as displayed."),
        text("type", "Not used."),
        primary
      ]
    }
  ]
}
