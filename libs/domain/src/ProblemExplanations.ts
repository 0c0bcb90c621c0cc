import type { ErrorCode } from "./Problem.js"

/** What each error code means for a caller: the error pages and the description's table say this. */
export const ProblemExplanations: Record<ErrorCode, string> = {
  INVALID_INVITATION_PARAM: "The invitation was refused: the role is not one of the six roles, the e-mail address is malformed, or the person is already a member of the tenant.",
  INVALID_REGULATION: "A regulations value holds a token other than DORA, NIS2, RGPD, PCI_DSS, HDS or ISO_27001.",
  INVALID_REQUEST: "The request does not match the schema of the endpoint: a bad query or path parameter, malformed JSON or a body of the wrong shape. `detail` names the offending input.",
  UNAUTHENTICATED: "The Authorization header is missing or is not `Bearer <token>`, or the token is malformed, unknown, revoked or expired. Fetch a new token; do not retry with the same one.",
  INSUFFICIENT_SCOPE: "The token's scope does not allow the request (a `read` token on a write endpoint), or its holder lacks the tenant-admin role that the provisioning endpoints require. `detail` names what was needed.",
  NOT_FOUND: "The endpoint is not part of the public API, or the resource does not exist in the caller's tenant (resources of other tenants read as absent).",
  ALREADY_INVITED: "A PENDING invitation already exists for this e-mail address (addresses compare case-insensitively).",
  INVITATION_NOT_PENDING: "Only a PENDING invitation can be revoked; this one was accepted, revoked or has expired.",
  LAST_TENANT_ADMIN: "The member is the tenant's last active tenant-admin: a tenant must keep one tenant-admin, so invite (or keep) another tenant-admin before removing this one. Nothing was changed.",
  MEMBER_REMOVED: "Internal (administration API only): an SSO just-in-time login of a person who was removed from the tenant. Only a new invitation, once accepted, brings them back.",
  CONFLICT: "The request conflicts with the current state of the resource.",
  REQUEST_TIMEOUT: "The request did not arrive in time: by default the server waits 10 seconds for the request line and headers, and 20 seconds for the whole request, body included. The connection is closed; send the request again on a new connection, without pausing while sending it.",
  PAYLOAD_TOO_LARGE: "The request body is larger than 1 MiB.",
  UNSUPPORTED_MEDIA_TYPE: "The endpoint takes a JSON body and the request's `Content-Type` is not `application/json` (a `charset`, if given, must be `utf-8`): a form, text, another `+json` type, or no `Content-Type` at all. Send the body as JSON with `Content-Type: application/json`.",
  RATE_LIMITED: "Too many requests in the last 60 seconds. Wait the number of seconds given by `Retry-After` (equal to `X-RateLimit-Reset` minus now, rounded up), then retry.",
  REQUEST_HEADER_FIELDS_TOO_LARGE: "The request line and headers together exceed 16 KiB. The connection is closed; shorten the headers (cookies, long custom headers) before retrying.",
  INTERNAL: "An unexpected error occurred on our side. It has been logged; the body never carries internal details.",
  UNAVAILABLE: "A service behind the API is unavailable or did not answer in time. Retry after the number of seconds given by `Retry-After`."
}
