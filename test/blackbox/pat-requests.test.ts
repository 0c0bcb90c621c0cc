import { beforeAll, expect, it } from "vitest"
import { expectProblem } from "../support/problem.js"
import { ssoMember } from "../support/provisioning.js"
import { errorsUrl, type CreatedTenant } from "../support/system.js"
import { useSystem } from "../support/useSystem.js"

const system = useSystem()
let tenant: CreatedTenant

const justification = "CI pipeline publishing the application inventory every night."
const apps = "/api/v1/referentiel/applications"

beforeAll(async () => {
  tenant = await system.createTenant("bb-pat-requests")
  await ssoMember(system, tenant, "oidc|bb-viewer", "viewer@bb-pat-requests.example", "viewer")
}, 120_000)

const request = (email: string, scope: "read" | "write") =>
  system.cliJson(["pat", "request", "--tenant", tenant.slug, "--email", email, "--scope", scope, "--days", "30", "--justification", justification])

it("a request filed and approved with the CLI gives its requester a working token, shown once; revoking it gives 401", async () => {
  const filed = await request("viewer@bb-pat-requests.example", "read")
  expect(filed).toMatchObject({ tenantId: tenant.id, userSub: "oidc|bb-viewer", role: "viewer", scope: "read", days: 30, status: "pending", justification })
  const pending = await system.cliJson(["pat", "requests", "--tenant", tenant.slug, "--status", "pending"])
  expect(pending.map((r: any) => r.id)).toEqual([filed.id])

  const approved = await system.cliJson(["pat", "approve", filed.id])
  expect(approved.request).toMatchObject({ id: filed.id, status: "approved", decidedBy: { role: "operator", email: null }, patId: approved.pat.id })
  expect(approved.request.decidedBy.userSub).toMatch(/^operator:/)
  expect(approved.pat.token).toMatch(/^ap_pat_[0-9A-Za-z]{36}$/)
  expect(Date.parse(approved.pat.expiresAt) - Date.parse(approved.request.decidedAt)).toBe(30 * 86_400_000)
  expect((await system.api(approved.pat.token).get("/referentiel/applications")).status).toBe(200)

  // Decided once: the second approval mints nothing.
  const again = await system.cli(["pat", "approve", filed.id, "--json"])
  expect(again.code).toBe(1)
  expect(JSON.parse(again.stderr)).toMatchObject({ status: 409, errorCode: "CONFLICT", type: `${errorsUrl}/conflict` })
  const listed = await system.cliJson(["pat", "requests", "--tenant", tenant.slug])
  expect(listed.find((r: any) => r.id === filed.id)).toEqual(approved.request)
  expect(JSON.stringify(listed)).not.toContain(approved.pat.token)

  // The member sees the token (never its value) among theirs, as the console will show it.
  const tokens = await system.adminOk("gateway", "GET", `/admin/pats?tenantId=${tenant.id}&userSub=${encodeURIComponent("oidc|bb-viewer")}`)
  expect(tokens).toEqual([expect.objectContaining({ id: approved.pat.id, tokenPrefix: approved.pat.token.slice(0, 10), scope: "read" })])

  await system.cliJson(["pat", "revoke", approved.pat.token])
  expectProblem(await system.api(approved.pat.token).get("/referentiel/applications"), "UNAUTHENTICATED", apps)
  expect(system.logs.some((line) => line.includes("PAT request approved"))).toBe(true)
  expect(system.logs.some((line) => line.includes(approved.pat.token))).toBe(false)
}, 120_000)

it("a request denied with the CLI is settled with its reason, and cannot be approved afterwards", async () => {
  const filed = await request(tenant.adminEmail, "write")
  const denied = await system.cliJson(["pat", "deny", filed.id, "--reason", "Use the team's read token."])
  expect(denied).toMatchObject({ id: filed.id, status: "denied", reason: "Use the team's read token.", patId: null })
  const approval = await system.cli(["pat", "approve", filed.id, "--json"])
  expect(approval.code).toBe(1)
  expect(JSON.parse(approval.stderr)).toMatchObject({ status: 409, errorCode: "CONFLICT" })
  const denials = await system.cliJson(["pat", "requests", "--tenant", tenant.slug, "--status", "denied"])
  expect(denials.map((r: any) => r.id)).toEqual([filed.id])
}, 120_000)

it("a viewer cannot request a write token: the CLI exits 1 with the gateway's 400", async () => {
  const refused = await system.cli([
    "pat", "request", "--tenant", tenant.slug, "--email", "viewer@bb-pat-requests.example", "--scope", "write", "--justification", justification, "--json"
  ])
  expect(refused.code).toBe(1)
  expect(JSON.parse(refused.stderr)).toMatchObject({
    status: 400,
    errorCode: "INVALID_REQUEST",
    detail: "a member with the role 'viewer' may request a token of scope 'read' at most, not 'write'"
  })
}, 120_000)
