import { HttpApi, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { PublicApi, scoped, Upstream } from "@portfolio/domain"
import { describe, expect, it } from "@effect/vitest"
import { Option } from "effect"
import { allowListOf, isScimPath, offListDetail } from "../../src/domain/AllowList.js"

const table = allowListOf(PublicApi)
const summary = table.routes.map((r) =>
  `${r.method} ${r.path} ${r.scope} ${Option.getOrElse(r.requiredRole, () => "-")} ${Option.getOrElse(r.credential, () => "-")} ${r.upstream}`
)

describe("allow-list derived from PublicApi", () => {
  it("lists exactly the 26 public endpoints with their scope, role, required credential and upstream", () => {
    expect([...summary].sort()).toEqual([
      "DELETE /api/v1/scim/v2/Users/:id write - scim provisioning",
      "DELETE /api/v1/tenant/invitations/:id write tenant-admin - provisioning",
      "DELETE /api/v1/tenant/invitations/members/:userSub write tenant-admin - provisioning",
      "GET /api/v1/referentiel/applications read - - referential",
      "GET /api/v1/referentiel/applications/:code read - - referential",
      "GET /api/v1/referentiel/applications/:code/changes read - - referential",
      "GET /api/v1/referentiel/functions read - - referential",
      "GET /api/v1/referentiel/functions/:id read - - referential",
      "GET /api/v1/referentiel/functions/by-application/:code read - - referential",
      "GET /api/v1/referentiel/functions/flat read - - referential",
      "GET /api/v1/referentiel/functions/posi read - - referential",
      "GET /api/v1/referentiel/functions/search read - - referential",
      "GET /api/v1/referentiel/functions/stats read - - referential",
      "GET /api/v1/scim/v2/ResourceTypes read - scim provisioning",
      "GET /api/v1/scim/v2/ResourceTypes/:id read - scim provisioning",
      "GET /api/v1/scim/v2/Schemas read - scim provisioning",
      "GET /api/v1/scim/v2/Schemas/:id read - scim provisioning",
      "GET /api/v1/scim/v2/ServiceProviderConfig read - scim provisioning",
      "GET /api/v1/scim/v2/Users read - scim provisioning",
      "GET /api/v1/scim/v2/Users/:id read - scim provisioning",
      "GET /api/v1/tenant/invitations read tenant-admin - provisioning",
      "GET /api/v1/tenant/invitations/members read tenant-admin - provisioning",
      "PATCH /api/v1/scim/v2/Users/:id write - scim provisioning",
      "POST /api/v1/scim/v2/Users write - scim provisioning",
      "POST /api/v1/tenant/invitations write tenant-admin - provisioning",
      "PUT /api/v1/scim/v2/Users/:id write - scim provisioning"
    ])
  })

  const op = (method: string, path: string) => Option.map(Option.fromNullishOr(table.match(method, path)), (r) => r.operationId)

  it("matches concrete paths, literal segments before parameters", () => {
    expect(op("GET", "/api/v1/referentiel/functions/search")).toEqual(Option.some("functions.searchFunctions"))
    expect(op("GET", "/api/v1/referentiel/functions/stats")).toEqual(Option.some("functions.getFunctionStats"))
    expect(op("GET", "/api/v1/referentiel/functions/flat")).toEqual(Option.some("functions.listFunctionsFlat"))
    expect(op("GET", "/api/v1/referentiel/functions/8c1b4c1e-1111-4b1e-9c1e-111111111111")).toEqual(Option.some("functions.getFunction"))
    expect(op("GET", "/api/v1/referentiel/functions/by-application/CRM-01")).toEqual(Option.some("functions.listFunctionsByApplication"))
    expect(op("GET", "/api/v1/referentiel/applications/CRM-01/changes")).toEqual(Option.some("applications.listApplicationChanges"))
    expect(op("GET", "/api/v1/tenant/invitations/members")).toEqual(Option.some("invitations.listMembers"))
    expect(op("DELETE", "/api/v1/tenant/invitations/members/auth0%7C42")).toEqual(Option.some("invitations.removeMember"))
    expect(op("DELETE", "/api/v1/tenant/invitations/3f1c6f0e-8b5a-4f7e-9a51-2f4f8f3f0a11")).toEqual(Option.some("invitations.revokeInvitation"))
    expect(op("POST", "/api/v1/tenant/invitations")).toEqual(Option.some("invitations.createInvitation"))
  })

  it("admits HEAD wherever GET is, as the GET route with its scope and role", () => {
    expect(table.match("HEAD", "/api/v1/referentiel/applications/CRM-01")).toBe(table.match("GET", "/api/v1/referentiel/applications/CRM-01"))
    expect(op("HEAD", "/api/v1/referentiel/functions/search")).toEqual(Option.some("functions.searchFunctions"))
    expect(table.match("HEAD", "/api/v1/tenant/invitations/members")?.requiredRole).toEqual(Option.some("tenant-admin"))
    expect(op("HEAD", "/api/v1/tenant/invitations")).toEqual(Option.some("invitations.listInvitations"))
  })

  it("has no route for anything else: other methods, admin paths, extra or empty segments", () => {
    for (const [method, path] of [
      ["PUT", "/api/v1/referentiel/applications/CRM-01"],
      ["POST", "/api/v1/referentiel/applications"],
      ["HEAD", "/api/v1/tenant/invitations/3f1c6f0e-8b5a-4f7e-9a51-2f4f8f3f0a11"],
      ["HEAD", "/api/v1/admin/pats"],
      ["GET", "/api/v1/tenant/invitations/3f1c6f0e-8b5a-4f7e-9a51-2f4f8f3f0a11"],
      ["PATCH", "/api/v1/tenant/invitations"],
      ["GET", "/admin/pats"],
      ["POST", "/admin/pats"],
      ["POST", "/api/v1/admin/pats"],
      ["PUT", "/admin/tenants/00000000-0000-0000-0000-000000000000/applications/CRM-01"],
      ["POST", "/admin/tenants"],
      ["GET", "/api/v1/referentiel/applications/"],
      ["GET", "/api/v1/referentiel/applications//changes"],
      ["GET", "/api/v1/referentiel/applications/CRM-01/changes/extra"],
      ["GET", "/api/v2/referentiel/applications"],
      ["GET", "/referentiel/applications"],
      ["GET", "/api/v1"],
      ["GET", "/api/v1/"],
      ["GET", "/api/v1/scim/v2/Groups"],
      ["POST", "/api/v1/scim/v2/Bulk"],
      ["GET", "/api/v1/scim/v2"]
    ] as const) {
      expect(op(method, path), `${method} ${path}`).toEqual(Option.none())
    }
  })

  it("tells the SCIM prefix by path, and an identity tool asking for Groups where roles are set", () => {
    for (const path of ["/api/v1/scim/v2", "/api/v1/scim/v2/Users", "/api/v1/scim/v2/Groups/x"]) expect(isScimPath(path), path).toBe(true)
    for (const path of ["/api/v1/scim/v2x", "/api/v1/scim", "/scim/v2/Users", "/api/v1/referentiel/applications"]) expect(isScimPath(path), path).toBe(false)
    const groups = "Groups are not supported: roles are set per User, in its 'roles' attribute (see /ResourceTypes)."
    expect(offListDetail("GET", "/api/v1/scim/v2/Groups")).toBe(groups)
    expect(offListDetail("PATCH", "/api/v1/scim/v2/Groups/1f0c")).toBe(groups)
    expect(offListDetail("GET", "/api/v1/scim/v2/Groupsx")).toBe("GET /api/v1/scim/v2/Groupsx is not an endpoint of the public API.")
  })

  it("refuses to start on an endpoint that carries no scope or a group without upstream", () => {
    const noScope = HttpApi.make("x").add(
      HttpApiGroup.make("g").add(HttpApiEndpoint.get("open", "/open")).annotate(Upstream, "referential")
    )
    expect(() => allowListOf(noScope)).toThrow("public endpoint g.open has no RequiredScope annotation")
    const noUpstream = HttpApi.make("y").add(
      HttpApiGroup.make("g").add(HttpApiEndpoint.get("read", "/read").annotateMerge(scoped("read")))
    )
    expect(() => allowListOf(noUpstream)).toThrow("public endpoint g.read has no Upstream annotation")
  })
})
