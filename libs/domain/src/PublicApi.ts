import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Schema } from "effect"
import { Application, ApplicationCode, ApplicationListQuery } from "./Application.js"
import { RequiredRole, scoped, Upstream } from "./Annotations.js"
import { BusinessFunction, FunctionId, FunctionSearchQuery, FunctionTreeNode, PosiTreeNode, ReferentialStats } from "./BusinessFunction.js"
import { ChangeLimitCap, ChangeLimitDefault, ChangeListQuery, ChangeLogEntry } from "./ChangeLog.js"
import {
  AlreadyInvited,
  asProblem,
  InvalidInvitationParam,
  InvitationNotPending,
  LastTenantAdmin,
  NotFound
} from "./Errors.js"
import { PageQuery, paginatedOperation } from "./Page.js"
import { Invitation, InvitationRequest, Member } from "./Provisioning.js"
import { Authentication, PublicProblems } from "./Security.js"
import { PublicApiPrefix } from "./Prefix.js"
import { ScimGroup } from "./Scim.js"
import { InputText } from "./Text.js"

export { PublicApiPrefix } from "./Prefix.js"

const CodePath = Schema.Struct({ code: ApplicationCode })

/** The lists (docs/product-rules.md#lists); trees and single reads are not paginated. */
const paginated = paginatedOperation()
const paginatedChanges = paginatedOperation({
  defaultLimit: ChangeLimitDefault,
  limitDescription: `Number of entries, default ${ChangeLimitDefault}; values above ${ChangeLimitCap} are capped to ${ChangeLimitCap}; values below 1 give 400.`
})

export class ApplicationsGroup extends HttpApiGroup.make("applications")
  .add(
    HttpApiEndpoint.get("listApplications", "/referentiel/applications", {
      query: ApplicationListQuery,
      success: Schema.Array(Application)
    })
      .annotateMerge(scoped("read", paginated))
      .annotate(OpenApi.Summary, "List applications")
      .annotate(OpenApi.Description, "All applications of the tenant, filtered by `data_class`, `criticality`, `regulation` and `status` (all optional, combined with AND). Sorted by code.")
  )
  .add(
    HttpApiEndpoint.get("getApplication", "/referentiel/applications/:code", {
      params: CodePath,
      success: Application,
      error: asProblem(NotFound)
    })
      .annotateMerge(scoped("read"))
      .annotate(OpenApi.Summary, "Read one application")
  )
  .add(
    HttpApiEndpoint.get("listApplicationChanges", "/referentiel/applications/:code/changes", {
      params: CodePath,
      query: ChangeListQuery,
      success: Schema.Array(ChangeLogEntry),
      error: asProblem(NotFound)
    })
      .annotateMerge(scoped("read", paginatedChanges))
      .annotate(OpenApi.Summary, "Change log of one application")
      .annotate(OpenApi.Description, "Changes to the 11 audited fields, newest first. `limit` defaults to 50 and is capped at 200; `cursor` continues after a page, whose `Link` header gives the next one.")
  )
  .annotate(OpenApi.Title, "Applications")
  .annotate(Upstream, "referential")
  .middleware(Authentication)
  .prefix(PublicApiPrefix) {}

export class FunctionsGroup extends HttpApiGroup.make("functions")
  .add(
    HttpApiEndpoint.get("getFunctionTree", "/referentiel/functions", {
      success: Schema.Array(FunctionTreeNode)
    })
      .annotateMerge(scoped("read"))
      .annotate(OpenApi.Summary, "Tree of business functions")
      .annotate(OpenApi.Description, "Root functions with their descendants nested in `children`, siblings sorted by code.")
  )
  .add(
    HttpApiEndpoint.get("listFunctionsFlat", "/referentiel/functions/flat", {
      query: PageQuery,
      success: Schema.Array(BusinessFunction)
    })
      .annotateMerge(scoped("read", paginated))
      .annotate(OpenApi.Summary, "Flat list of business functions")
      .annotate(OpenApi.Description, "Every function once, in depth-first order, with its `level` and `path`.")
  )
  .add(
    HttpApiEndpoint.get("getFunctionTreePosi", "/referentiel/functions/posi", {
      success: Schema.Array(PosiTreeNode)
    })
      .annotateMerge(scoped("read"))
      .annotate(OpenApi.Summary, "Tree with enriched linked applications")
      .annotate(OpenApi.Description, "The tree, where each function lists its linked applications with their name, parent application and criticality.")
  )
  .add(
    HttpApiEndpoint.get("searchFunctions", "/referentiel/functions/search", {
      query: FunctionSearchQuery,
      success: Schema.Array(BusinessFunction)
    })
      .annotateMerge(scoped("read", paginated))
      .annotate(OpenApi.Summary, "Search business functions")
      .annotate(OpenApi.Description, "Functions whose code, name or description contains `q`, sorted by code.")
  )
  .add(
    HttpApiEndpoint.get("getFunctionStats", "/referentiel/functions/stats", {
      success: ReferentialStats
    })
      .annotateMerge(scoped("read"))
      .annotate(OpenApi.Summary, "Referential statistics")
  )
  .add(
    HttpApiEndpoint.get("listFunctionsByApplication", "/referentiel/functions/by-application/:code", {
      params: CodePath,
      query: PageQuery,
      success: Schema.Array(BusinessFunction),
      error: asProblem(NotFound)
    })
      .annotateMerge(scoped("read", paginated))
      .annotate(OpenApi.Summary, "Functions of one application")
      .annotate(OpenApi.Description, "The functions linked to the application, sorted by code.")
  )
  .add(
    HttpApiEndpoint.get("getFunction", "/referentiel/functions/:id", {
      params: Schema.Struct({ id: FunctionId }),
      success: BusinessFunction,
      error: asProblem(NotFound)
    })
      .annotateMerge(scoped("read"))
      .annotate(OpenApi.Summary, "Read one business function")
  )
  .annotate(OpenApi.Title, "Business functions")
  .annotate(Upstream, "referential")
  .middleware(Authentication)
  .prefix(PublicApiPrefix) {}

export class InvitationsGroup extends HttpApiGroup.make("invitations")
  .add(
    HttpApiEndpoint.post("createInvitation", "/tenant/invitations", {
      payload: InvitationRequest,
      success: Invitation.pipe(HttpApiSchema.status(201)),
      error: [asProblem(InvalidInvitationParam), asProblem(AlreadyInvited)]
    })
      .annotateMerge(scoped("write"))
      .annotate(OpenApi.Summary, "Invite a member")
      .annotate(OpenApi.Description, "Sends a magic link valid 7 days. 400 `INVALID_INVITATION_PARAM` for a malformed e-mail, an unknown role or an existing member; 409 `ALREADY_INVITED` when a PENDING invitation exists for the e-mail.")
  )
  .add(
    HttpApiEndpoint.get("listInvitations", "/tenant/invitations", {
      query: PageQuery,
      success: Schema.Array(Invitation)
    })
      .annotateMerge(scoped("read", paginated))
      .annotate(OpenApi.Summary, "List invitations")
      .annotate(OpenApi.Description, "All invitations whatever their status, newest first.")
  )
  .add(
    HttpApiEndpoint.get("listMembers", "/tenant/invitations/members", {
      query: PageQuery,
      success: Schema.Array(Member)
    })
      .annotateMerge(scoped("read", paginated))
      .annotate(OpenApi.Summary, "List active members")
      .annotate(OpenApi.Description, "Active members, most recently granted first.")
  )
  .add(
    HttpApiEndpoint.delete("revokeInvitation", "/tenant/invitations/:id", {
      // Any string: an id that is not a UUID names no invitation, so it reads as an unknown id (404),
      // not as a malformed request.
      params: Schema.Struct({ id: Schema.String.annotate({ description: "The invitation's id (a UUID); any other value answers 404." }) }),
      success: HttpApiSchema.NoContent,
      error: [asProblem(NotFound), asProblem(InvitationNotPending)]
    })
      .annotateMerge(scoped("write"))
      .annotate(OpenApi.Summary, "Revoke a pending invitation")
      .annotate(OpenApi.Description, "204 with no body. 404 `NOT_FOUND` for an unknown id, another tenant's invitation, or an id that is not a UUID, all with the same body; 409 `INVITATION_NOT_PENDING` when it is accepted, revoked or expired.")
  )
  .add(
    HttpApiEndpoint.delete("removeMember", "/tenant/invitations/members/:userSub", {
      params: Schema.Struct({ userSub: InputText.pipe(Schema.check(Schema.isMinLength(1)), Schema.check(Schema.isMaxLength(255))) }),
      success: HttpApiSchema.NoContent,
      error: [asProblem(NotFound), asProblem(LastTenantAdmin)]
    })
      .annotateMerge(scoped("write"))
      .annotate(OpenApi.Summary, "Remove a member")
      .annotate(OpenApi.Description, "Irreversible. The member loses access to the tenant at once; records they created keep their userSub. 404 also when the user belongs only to another tenant. 409 `LAST_TENANT_ADMIN` when the member is the tenant's last active tenant-admin: a tenant always keeps one, so nothing changes (removing oneself is allowed while another tenant-admin remains).")
  )
  .annotate(OpenApi.Title, "Tenant provisioning")
  .annotate(
    OpenApi.Description,
    "For tenant-admins only. Besides the token, provisioning checks its own records on every call: a caller removed from the tenant gets 401 `UNAUTHENTICATED` even if the token has not been revoked yet, and a caller whose membership is not tenant-admin gets 403 `INSUFFICIENT_SCOPE` naming that role."
  )
  .annotate(Upstream, "provisioning")
  .annotate(RequiredRole, "tenant-admin")
  .middleware(Authentication)
  .prefix(PublicApiPrefix) {}

/** The whole public contract: the gateway, the services, the OpenAPI document and the SDKs derive from it. */
export class PublicApi extends HttpApi.make("public")
  .add(ApplicationsGroup)
  .add(FunctionsGroup)
  .add(InvitationsGroup)
  .add(ScimGroup)
  .middleware(PublicProblems)
  .annotateMerge(
    OpenApi.annotations({
      title: "Architecture portfolio public API",
      version: "1",
      description: "Referential of applications and business functions, and tenant user provisioning."
    })
  ) {}

