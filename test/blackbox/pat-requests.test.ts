import { beforeAll, expect, it } from "vitest"
import { expectProblem } from "../support/problem.js"
import { ssoMember } from "../support/provisioning.js"
import { errorsUrl, type CreatedTenant } from "../support/system.js"
import { useSharedSystem } from "../support/useSystem.js"

const system = useSharedSystem()
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
  expect(system.logs.some((line) => line.includes("PAT request approved") && line.includes(filed.id))).toBe(true)
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

/** A request filed on the admin API as the console files one, naming the member as the caller vouches for them. */
const fileAs = (member: { readonly userSub: string; readonly email: string; readonly role: string }, scope: "read" | "write") =>
  system.adminOk("gateway", "POST", "/admin/pat-requests", { tenantId: tenant.id, ...member, scope, days: 30, justification })

const tokensOf = (userSub: string) => system.adminOk("gateway", "GET", `/admin/pats?tenantId=${tenant.id}&userSub=${encodeURIComponent(userSub)}`)

it("a request carries no authority: the approval reads the requester again, and refuses one who is no member or whose role no longer allows the scope", async () => {
  // Named as an architect, but provisioning knows nobody of this userSub in the tenant.
  const stranger = await fileAs({ userSub: "oidc|bb-stranger", email: "stranger@bb-pat-requests.example", role: "architect" }, "write")
  const refused = await system.cli(["pat", "approve", stranger.id, "--json"])
  expect(refused.code).toBe(1)
  expect(JSON.parse(refused.stderr)).toMatchObject({
    status: 409,
    errorCode: "CONFLICT",
    detail: `PAT request ${stranger.id} cannot be approved: stranger@bb-pat-requests.example is no longer a member of the tenant. Nothing was minted; deny the request or let it close.`
  })
  expect(await tokensOf("oidc|bb-stranger")).toEqual([])

  // Named as an architect asking for write, but a viewer in provisioning's record.
  const viewer = await fileAs({ userSub: "oidc|bb-viewer", email: "viewer@bb-pat-requests.example", role: "architect" }, "write")
  const demoted = await system.cli(["pat", "approve", viewer.id, "--json"])
  expect(demoted.code).toBe(1)
  expect(JSON.parse(demoted.stderr)).toMatchObject({
    status: 409,
    detail: `PAT request ${viewer.id} cannot be approved: its requester's role is now 'viewer', which allows a token of scope 'read' at most, not 'write'. Nothing was minted; the member files a new request.`
  })
  expect((await system.cliJson(["pat", "requests", "--tenant", tenant.slug, "--status", "pending"])).map((r: any) => r.id)).toEqual(
    expect.arrayContaining([stranger.id, viewer.id])
  )
  expect(await tokensOf("oidc|bb-viewer")).toEqual([])
}, 120_000)

it("a removal closes the member's pending requests, saying why, and nothing can approve them; a token approved before the removal is revoked", async () => {
  await ssoMember(system, tenant, "oidc|bb-leaver", "leaver@bb-pat-requests.example", "architect")
  const kept = await request("leaver@bb-pat-requests.example", "read")
  const approved = await system.cliJson(["pat", "approve", kept.id])
  const pending = await request("leaver@bb-pat-requests.example", "write")
  const admin = await system.createPat(tenant, "write")
  expect((await system.api(admin.token).del(`/tenant/invitations/members/${encodeURIComponent("oidc|bb-leaver")}`)).status).toBe(204)

  // Whether the approval meets the request before or after the removal's event closed it, it mints nothing.
  const refused = await system.cli(["pat", "approve", pending.id, "--json"])
  expect(refused.code).toBe(1)
  expect(JSON.parse(refused.stderr)).toMatchObject({ status: 409, errorCode: "CONFLICT" })

  let closed: Array<any> = []
  for (let i = 0; i < 100 && closed.length === 0; i++) {
    closed = await system.cliJson(["pat", "requests", "--tenant", tenant.slug, "--status", "closed"])
    if (closed.length === 0) await new Promise((resolve) => setTimeout(resolve, 200))
  }
  expect(closed).toEqual([
    expect.objectContaining({ id: pending.id, status: "closed", decidedBy: null, patId: null, reason: "Closed undecided: the requester was removed from the tenant." })
  ])
  const afterwards = await system.cli(["pat", "approve", pending.id, "--json"])
  expect(JSON.parse(afterwards.stderr)).toMatchObject({
    status: 409,
    detail: `PAT request ${pending.id} is closed: its requester was removed from the tenant; it can no longer be decided.`
  })
  // The human listing says why too.
  const listing = await system.cli(["pat", "requests", "--tenant", tenant.slug, "--status", "closed"])
  expect(listing.stdout).toContain("Closed undecided: the requester was removed from the tenant.")
  expect(await tokensOf("oidc|bb-leaver")).toEqual([])
  expectProblem(await system.api(approved.pat.token).get("/referentiel/applications"), "UNAUTHENTICATED", apps)
}, 120_000)

it("keeps at most 5 requests pending per member, even filed at once: the others are a 409 saying so; a decision frees a place", async () => {
  await ssoMember(system, tenant, "oidc|bb-flooder", "flooder@bb-pat-requests.example", "viewer")
  const file = () =>
    system.cli(["pat", "request", "--tenant", tenant.slug, "--email", "flooder@bb-pat-requests.example", "--scope", "read", "--days", "30", "--justification", justification, "--json"])
  const answers = await Promise.all(Array.from({ length: 8 }, file))
  const kept = answers.filter((a) => a.code === 0).map((a) => JSON.parse(a.stdout))
  const refused = answers.filter((a) => a.code !== 0).map((a) => JSON.parse(a.stderr))
  expect(kept).toHaveLength(5)
  expect(refused).toHaveLength(3)
  for (const problem of refused) {
    expect(problem).toMatchObject({ status: 409, errorCode: "CONFLICT" })
    expect(problem.detail).toMatch(/you have 5 pending PAT requests in this tenant/)
  }
  const pending = await system.cliJson(["pat", "requests", "--tenant", tenant.slug, "--status", "pending"])
  expect(pending.filter((r: any) => r.userSub === "oidc|bb-flooder").map((r: any) => r.id).sort()).toEqual(kept.map((r: any) => r.id).sort())
  await system.cliJson(["pat", "deny", kept[0].id, "--reason", "One is enough."])
  expect(JSON.parse((await file()).stdout)).toMatchObject({ status: "pending" })
})

// The other black-box files make their tenants, tokens and applications on the admin APIs (the
// harness's fixtures); here the compiled CLI makes them, end to end, as an operator does.
it("an operator's first steps with the compiled CLI: tenant create, pat create and app put, then the token reads the application", async () => {
  const created = await system.cliJson(["tenant", "create", "bb-cli-steps", "--admin-email", "admin@bb-cli-steps.example"])
  expect(created).toMatchObject({ slug: "bb-cli-steps", adminEmail: "admin@bb-cli-steps.example", tenantId: expect.any(String), adminUserSub: expect.any(String) })
  const pat = await system.cliJson(["pat", "create", "--tenant", "bb-cli-steps", "--email", "admin@bb-cli-steps.example", "--scope", "write", "--days", "7"])
  expect(pat).toMatchObject({ tenant: "bb-cli-steps", userSub: created.adminUserSub, scope: "write" })
  expect(pat.token).toMatch(/^ap_pat_[0-9A-Za-z]{36}$/)
  expect(Date.parse(pat.expiresAt) - Date.now()).toBeGreaterThan(6 * 86_400_000)
  expect(Date.parse(pat.expiresAt) - Date.now()).toBeLessThanOrEqual(7 * 86_400_000)

  const saved = await system.cliJson(["app", "put", "--tenant", "bb-cli-steps"], JSON.stringify({ code: "CLI-1", name: "Put by the CLI", regulations: "DORA,NIS2" }))
  expect(saved).toMatchObject({ code: "CLI-1", name: "Put by the CLI", regulations: "DORA,NIS2" })
  const read = await system.api(pat.token).get("/referentiel/applications/CLI-1")
  expect(read.status).toBe(200)
  expect(read.body).toEqual(saved)

  const human = await system.cli(["app", "put", "--tenant", "bb-cli-steps"], JSON.stringify({ code: "CLI-1", name: "Renamed" }))
  expect(human.code).toBe(0)
  expect(human.stdout).toContain("Application CLI-1 saved in bb-cli-steps.")
})
