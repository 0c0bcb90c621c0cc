import { randomUUID } from "node:crypto"
import { beforeAll, describe, expect, it } from "vitest"
import { operatorIdentity, signAssertion } from "@portfolio/platform/security"
import { type Reply, send } from "../support/http.js"
import { catalogue, expectProblem } from "../support/problem.js"
import {
  inviteOk,
  invitationsPath,
  isWelcomeOf,
  memberThroughInvitation,
  membersPath,
  ssoMember,
  withDatabase
} from "../support/provisioning.js"
import type { CreatedPat, CreatedTenant } from "../support/system.js"
import { useSharedSystem } from "../support/useSystem.js"

const system = useSharedSystem()

// `partner`: a partner client's access token (client credentials), which carries a scope and never a role.
// `removed`: the tokens of a tenant-admin removed since they were minted. `demoted`: those of a
// tenant-admin removed and invited back as a viewer, minted since.
const holderRoles = ["tenant-admin", "architect", "contributor", "viewer", "partner", "removed", "demoted"] as const
const scopes = ["read", "write"] as const
const targets = ["own", "other"] as const
type HolderRole = (typeof holderRoles)[number]
type Scope = (typeof scopes)[number]
type Target = (typeof targets)[number]

interface Endpoint {
  readonly name: string
  readonly scope: Scope
}
const endpoints: ReadonlyArray<Endpoint> = [
  { name: "POST /tenant/invitations", scope: "write" },
  { name: "GET /tenant/invitations", scope: "read" },
  { name: "GET /tenant/invitations/members", scope: "read" },
  { name: "DELETE /tenant/invitations/{id}", scope: "write" },
  { name: "DELETE /tenant/invitations/members/{userSub}", scope: "write" }
]

let tenant: CreatedTenant
let other: CreatedTenant
let otherAdmin: CreatedPat
const pats = new Map<string, Pick<CreatedPat, "token">>()
const patOf = (role: HolderRole, scope: Scope) => pats.get(`${role}/${scope}`)!

/** A partner client of the tenant with this scope (the operator's CLI), and an access token from the token endpoint. */
const partnerToken = async (scope: Scope) => {
  const client = await system.cliJson(["partner", "create", "--tenant", tenant.slug, "--name", `bb-authz-${scope}`, "--scope", scope])
  const issued = await send(`${system.baseUrl}/oauth/token`, {
    method: "POST",
    body: `grant_type=client_credentials&client_id=${client.client_id}&client_secret=${encodeURIComponent(client.client_secret)}`,
    headers: { "content-type": "application/x-www-form-urlencoded" }
  })
  if (issued.status !== 200) throw new Error(`no partner token: ${issued.status} ${issued.text}`)
  return { token: JSON.parse(issued.text).access_token as string }
}

/** What each tenant holds that a cell may aim at. */
interface Fixtures {
  /** A PENDING invitation of the own tenant that only the one allowed cell revokes. */
  readonly revocable: string
  /** One that no cell may revoke: it must still be PENDING afterwards. */
  readonly standingInvitation: string
  readonly removable: string
  readonly standingMember: string
  readonly otherInvitation: string
  readonly otherMember: string
}
let fixtures: Fixtures

beforeAll(async () => {
  ;[tenant, other] = await Promise.all([system.createTenant("bb-authz"), system.createTenant("bb-authz-other")])
  const [admin, theirAdmin] = await Promise.all([system.createPat(tenant, "write"), system.createPat(other, "write")])
  otherAdmin = theirAdmin
  // The members of each role come in as people do: through an invitation and its acceptance page.
  for (const role of ["architect", "contributor", "viewer"] as const) {
    await memberThroughInvitation(system, admin, `${role}@bb-authz.example`, role)
  }
  const removedSub = await memberThroughInvitation(system, admin, "removed@bb-authz.example", "tenant-admin")
  const demotedSub = await memberThroughInvitation(system, admin, "demoted@bb-authz.example", "tenant-admin")
  const emailOf = (role: HolderRole) => (role === "tenant-admin" ? tenant.adminEmail : `${role}@bb-authz.example`)
  const wanted = holderRoles.filter((role) => role !== "demoted").flatMap((role) => scopes.map((scope) => [role, scope] as const))
  await Promise.all(wanted.map(async ([role, scope]) => {
    pats.set(`${role}/${scope}`, role === "partner" ? await partnerToken(scope) : await system.createPat(tenant, scope, emailOf(role)))
  }))
  const demotedBefore = await system.createPat(tenant, "write", "demoted@bb-authz.example")
  for (const sub of [removedSub, demotedSub]) {
    const removal = await system.api(admin.token).del(`${membersPath}/${encodeURIComponent(sub)}`)
    if (removal.status !== 204) throw new Error(`removing ${sub} answered ${removal.status}: ${removal.text}`)
  }
  await memberThroughInvitation(system, admin, "demoted@bb-authz.example", "viewer")
  await Promise.all(scopes.map(async (scope) => pats.set(`demoted/${scope}`, await system.createPat(tenant, scope, "demoted@bb-authz.example"))))
  // The removals reach every gateway within a second (member.removed): wait until they have.
  for (const token of [patOf("removed", "write").token, patOf("removed", "read").token, demotedBefore.token]) {
    for (let i = 0; i < 100 && (await system.api(token).get(membersPath)).status !== 401; i++) await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const [revocable, standingInvitation, otherInvitation] = await Promise.all([
    inviteOk(system, admin, "revocable@bb-authz.example", "viewer"),
    inviteOk(system, admin, "standing@bb-authz.example", "viewer"),
    inviteOk(system, otherAdmin, "theirs@bb-authz-other.example", "viewer")
  ])
  const [removable, standingMember, otherMember] = await Promise.all([
    ssoMember(system, tenant, `oidc|removable-${randomUUID()}`, "removable@bb-authz.example", "viewer"),
    ssoMember(system, tenant, `oidc|standing-${randomUUID()}`, "standing-member@bb-authz.example", "viewer"),
    ssoMember(system, other, `oidc|theirs-${randomUUID()}`, "theirs-member@bb-authz-other.example", "architect")
  ])
  fixtures = {
    revocable: revocable.id,
    standingInvitation: standingInvitation.id,
    removable: removable.userSub,
    standingMember: standingMember.userSub,
    otherInvitation: otherInvitation.id,
    otherMember: otherMember.userSub
  }
}, 240_000)

/**
 * The rules: scope first, then the tenant-admin role, which a partner token never has; an admin
 * reaches only their own tenant.
 */
const expected = (endpoint: Endpoint, role: HolderRole, scope: Scope, target: Target): string => {
  if (role === "removed") return "401 UNAUTHENTICATED"
  if (scope === "read" && endpoint.scope === "write") return "403 INSUFFICIENT_SCOPE (scope)"
  if (role !== "tenant-admin") return "403 INSUFFICIENT_SCOPE (role)"
  switch (endpoint.name) {
    case "POST /tenant/invitations":
      return "201 invitation in the own tenant only"
    case "GET /tenant/invitations":
    case "GET /tenant/invitations/members":
      return "200 own data, nothing of the other tenant"
    default:
      return target === "own" ? "204" : "404 NOT_FOUND"
  }
}

const theirInvitationIds = async () => new Set((await system.api(otherAdmin.token).get(invitationsPath)).body.map((i: any) => i.id))

/** Calls one cell and describes what came back in the terms of `expected`. */
const observe = async (endpoint: Endpoint, role: HolderRole, scope: Scope, target: Target): Promise<string> => {
  const api = system.api(patOf(role, scope).token)
  let reply: Reply
  switch (endpoint.name) {
    case "POST /tenant/invitations": {
      // Own: a new person. Other: a member of the other tenant, who may be invited here.
      const email = target === "own" ? `cell-${role}-${scope}@bb-authz.example` : "theirs-member@bb-authz-other.example"
      reply = await api.post(invitationsPath, { body: { email, arbRole: "viewer" } })
      break
    }
    // A list names no target: its "other" cell is the same call, which must show nothing of the other tenant.
    case "GET /tenant/invitations":
      reply = await api.get(invitationsPath)
      break
    case "GET /tenant/invitations/members":
      reply = await api.get(membersPath)
      break
    case "DELETE /tenant/invitations/{id}": {
      const allowed = role === "tenant-admin" && scope === "write"
      const id = target === "other" ? fixtures.otherInvitation : allowed ? fixtures.revocable : fixtures.standingInvitation
      reply = await api.del(`${invitationsPath}/${id}`)
      break
    }
    default: {
      const allowed = role === "tenant-admin" && scope === "write"
      const sub = target === "other" ? fixtures.otherMember : allowed ? fixtures.removable : fixtures.standingMember
      reply = await api.del(`${membersPath}/${encodeURIComponent(sub)}`)
    }
  }
  return describeReply(endpoint, reply)
}

const describeReply = async (endpoint: Endpoint, reply: Reply): Promise<string> => {
  const problem = reply.body?.errorCode
  if (reply.status >= 400) {
    const row = catalogue[problem as keyof typeof catalogue]
    const wellFormed = /^application\/problem\+json/.test(reply.contentType) && row?.status === reply.status && reply.body.title === row.title
    if (!wellFormed) return `${reply.status} malformed problem ${reply.text.slice(0, 200)}`
    if (reply.status !== 403) return `${reply.status} ${problem}`
    const why = /requires 'write'/.test(reply.body.detail) ? "scope" : /tenant-admin/.test(reply.body.detail) ? "role" : `unexplained: ${reply.body.detail}`
    return `403 ${problem} (${why})`
  }
  switch (endpoint.name) {
    case "POST /tenant/invitations": {
      if (reply.status !== 201) return `${reply.status} ${reply.text.slice(0, 200)}`
      const leaked = (await theirInvitationIds()).has(reply.body.id)
      return leaked ? "201 invitation visible to the other tenant" : "201 invitation in the own tenant only"
    }
    case "GET /tenant/invitations": {
      const ids: Array<string> = reply.body.map((i: any) => i.id)
      const own = ids.includes(fixtures.standingInvitation)
      const leak = ids.includes(fixtures.otherInvitation) || [...(await theirInvitationIds())].some((id) => ids.includes(id as string))
      return `${reply.status} ${own ? "own data" : "own data missing"}, ${leak ? "LEAKS the other tenant" : "nothing of the other tenant"}`
    }
    case "GET /tenant/invitations/members": {
      const subs: Array<string> = reply.body.map((m: any) => m.userSub)
      const own = subs.includes(tenant.adminSub) && subs.includes(fixtures.standingMember)
      const leak = subs.includes(other.adminSub) || subs.includes(fixtures.otherMember)
      return `${reply.status} ${own ? "own data" : "own data missing"}, ${leak ? "LEAKS the other tenant" : "nothing of the other tenant"}`
    }
    default:
      return reply.status === 204 && reply.text === "" ? "204" : `${reply.status} ${reply.text.slice(0, 200)}`
  }
}

describe("authorization matrix of the provisioning endpoints", () => {
  it("answers every cell (5 endpoints x 7 principals x 2 scopes x 2 targets) as the rules say", async () => {
    const cells = endpoints.flatMap((endpoint) =>
      holderRoles.flatMap((role) => scopes.flatMap((scope) => targets.map((target) => ({ endpoint, role, scope, target })))))
    expect(cells.length).toBe(140)
    // Cells run one at a time so that each sees the others' effects in a known order.
    const actual: Record<string, string> = {}
    const wanted: Record<string, string> = {}
    for (const { endpoint, role, scope, target } of cells) {
      const key = `${endpoint.name} | ${role} | ${scope} | ${target}`
      wanted[key] = expected(endpoint, role, scope, target)
      actual[key] = await observe(endpoint, role, scope, target)
    }
    const off = Object.keys(wanted).filter((key) => actual[key] !== wanted[key]).map((key) => `${key}: expected ${wanted[key]}, got ${actual[key]}`)
    expect(off).toEqual([])
  }, 120_000)

  it("changed only what the allowed cells targeted", async () => {
    const admin = patOf("tenant-admin", "read")
    const [invitations, members, theirInvitations, theirMembers] = await Promise.all([
      system.api(admin.token).get(invitationsPath),
      system.api(admin.token).get(membersPath),
      system.api(otherAdmin.token).get(invitationsPath),
      system.api(otherAdmin.token).get(membersPath)
    ])
    const status = (list: any, id: string) => list.body.find((i: any) => i.id === id)?.status
    expect({
      revocable: status(invitations, fixtures.revocable),
      standing: status(invitations, fixtures.standingInvitation),
      theirs: status(theirInvitations, fixtures.otherInvitation),
      removableListed: members.body.some((m: any) => m.userSub === fixtures.removable),
      standingListed: members.body.some((m: any) => m.userSub === fixtures.standingMember),
      theirsListed: theirMembers.body.some((m: any) => m.userSub === fixtures.otherMember),
      // Only the tenant-admin with a write token invited anyone: one new person, one member of the other tenant.
      invitedByCells: invitations.body.filter((i: any) => i.email.startsWith("cell-") || i.email.startsWith("theirs-member")).map((i: any) => i.email).sort(),
      // Theirs: the one invitation, and their admin's welcome link made with the tenant.
      theirInvitationCount: theirInvitations.body.filter((i: any) => !isWelcomeOf(other)(i)).length
    }).toEqual({
      revocable: "REVOKED",
      standing: "PENDING",
      theirs: "PENDING",
      removableListed: false,
      standingListed: true,
      theirsListed: true,
      invitedByCells: ["cell-tenant-admin-write@bb-authz.example", "theirs-member@bb-authz-other.example"],
      theirInvitationCount: 1
    })
  })
})

describe("provisioning's own records, when the gateway has not caught up", () => {
  let lagTenant: CreatedTenant
  let lagAdmin: CreatedPat
  let pendingId: string
  let viewerSub: string
  const calls = (pat: CreatedPat) => {
    const api = system.api(pat.token)
    return [
      [invitationsPath, () => api.post(invitationsPath, { body: { email: "lag-new@bb-authz-lag.example", arbRole: "viewer" } })],
      [invitationsPath, () => api.get(invitationsPath)],
      [membersPath, () => api.get(membersPath)],
      [`${invitationsPath}/${pendingId}`, () => api.del(`${invitationsPath}/${pendingId}`)],
      [`${membersPath}/${encodeURIComponent(viewerSub)}`, () => api.del(`${membersPath}/${encodeURIComponent(viewerSub)}`)]
    ] as const
  }

  beforeAll(async () => {
    lagTenant = await system.createTenant("bb-authz-lag")
    lagAdmin = await system.createPat(lagTenant, "write")
    pendingId = (await inviteOk(system, lagAdmin, "lag-pending@bb-authz-lag.example", "viewer")).id
    viewerSub = (await ssoMember(system, lagTenant, `oidc|lag-viewer-${randomUUID()}`, "lag-viewer@bb-authz-lag.example", "viewer")).userSub
  }, 120_000)

  const unchanged = async () => {
    const [invitations, members] = await Promise.all([system.api(lagAdmin.token).get(invitationsPath), system.api(lagAdmin.token).get(membersPath)])
    expect({
      invitations: invitations.body.map((i: any) => [i.email, i.status]),
      viewerListed: members.body.some((m: any) => m.userSub === viewerSub)
    }).toEqual({ invitations: [["lag-pending@bb-authz-lag.example", "PENDING"], [lagTenant.adminEmail, "PENDING"]], viewerListed: true })
  }

  it("answers a removed tenant-admin whose token still passes the gateway 401 UNAUTHENTICATED on all five endpoints, as the gateway would", async () => {
    const deputy = await ssoMember(system, lagTenant, `oidc|lag-deputy-${randomUUID()}`, "lag-deputy@bb-authz-lag.example", "tenant-admin")
    const deputyPat = await system.createPat(lagTenant, "write", deputy.userEmail)
    // Removed in the table only, with no member.removed event: the gateway keeps honouring the token.
    await withDatabase(system, (client) =>
      client.query("UPDATE provisioning.members SET removed_at = now() WHERE tenant_id = $1 AND user_sub = $2", [lagTenant.id, deputy.userSub]))
    const referential = await system.api(deputyPat.token).get("/referentiel/applications")
    expect(referential.status, "the gateway still admits the token").toBe(200)

    // The gateway's own answer to a revoked token, for comparison.
    const revoked = await system.createPat(lagTenant, "write")
    await system.adminOk("gateway", "POST", "/admin/pats/revoke", { tokenOrId: revoked.id })
    const reference = await system.api(revoked.token).get(invitationsPath)
    expectProblem(reference, "UNAUTHENTICATED", `/api/v1${invitationsPath}`)

    for (const [path, call] of calls(deputyPat)) {
      const reply = await call()
      expectProblem(reply, "UNAUTHENTICATED", `/api/v1${path}`)
      expect({ ...reply.body, instance: "(path)" }).toEqual({ ...reference.body, instance: "(path)" })
    }
    await unchanged()
  })

  it("answers a token claiming tenant-admin for a member who is not one 403 INSUFFICIENT_SCOPE naming the member's role", async () => {
    const stale = await system.adminOk("gateway", "POST", "/admin/pats", {
      tenantId: lagTenant.id,
      userSub: viewerSub,
      email: "lag-viewer@bb-authz-lag.example",
      role: "tenant-admin",
      scope: "write"
    })
    for (const [path, call] of calls({ id: stale.id, token: stale.token })) {
      const reply = await call()
      expectProblem(reply, "INSUFFICIENT_SCOPE", `/api/v1${path}`)
      expect(reply.body.detail).toMatch(/^role 'viewer' does not allow .*, which requires the tenant-admin role$/)
    }
    await unchanged()
  })
})

describe("an operator on the public API", () => {
  it("gets 401 on the five provisioning endpoints with a genuine operator assertion and no token: the gateway never takes an assertion from a client", async () => {
    const operator = operatorIdentity("operator:bb-authz")
    const cells = [
      ["POST", invitationsPath, { email: "by-operator@bb-authz.example", arbRole: "viewer" }],
      ["GET", invitationsPath, undefined],
      ["GET", membersPath, undefined],
      ["DELETE", `${invitationsPath}/${fixtures.standingInvitation}`, undefined],
      ["DELETE", `${membersPath}/${encodeURIComponent(fixtures.standingMember)}`, undefined]
    ] as const
    const answered: Array<string> = []
    for (const [method, path, body] of cells) {
      // Signed for provisioning's own public path, as the gateway would sign it: still not a way in.
      const assertion = signAssertion(system.secret, operator, {
        audience: "provisioning",
        method,
        target: `/api/v1${path}`,
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      const reply = await send(`${system.baseUrl}${path}`, {
        method,
        headers: { "x-portfolio-assertion": assertion, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      answered.push(`${method} ${path.replace(/\/[^/]+$/, "/{id}")} ${reply.status} ${reply.body?.errorCode}`)
    }
    expect(answered.every((line) => line.endsWith("401 UNAUTHENTICATED")), answered.join("\n")).toBe(true)
    const invitations = await system.api(patOf("tenant-admin", "read").token).get(invitationsPath)
    expect(invitations.body.some((i: any) => i.email === "by-operator@bb-authz.example")).toBe(false)
  })
})

describe("a partner token on the referential", () => {
  it("reads its own tenant's referential with either scope, and nothing of another tenant", async () => {
    await Promise.all([
      system.putApplication(tenant, { code: "AUTHZ-OWN", name: "Own", status: "ACTIVE" }),
      system.putApplication(other, { code: "AUTHZ-THEIRS", name: "Theirs", status: "ACTIVE" })
    ])
    const observed: Record<string, unknown> = {}
    for (const scope of scopes) {
      const api = system.api(patOf("partner", scope).token)
      const list = await api.get("/referentiel/applications")
      observed[`${scope} list`] = [list.status, list.body.map((a: any) => a.code)]
      observed[`${scope} own`] = (await api.get("/referentiel/applications/AUTHZ-OWN")).status
      observed[`${scope} theirs`] = (await api.get("/referentiel/applications/AUTHZ-THEIRS")).status
      observed[`${scope} theirs' changes`] = (await api.get("/referentiel/applications/AUTHZ-THEIRS/changes")).status
      observed[`${scope} functions`] = (await api.get("/referentiel/functions")).status
    }
    expect(observed).toEqual(Object.fromEntries(scopes.flatMap((scope) => [
      [`${scope} list`, [200, ["AUTHZ-OWN"]]],
      [`${scope} own`, 200],
      [`${scope} theirs`, 404],
      [`${scope} theirs' changes`, 404],
      [`${scope} functions`, 200]
    ])))
  })
})
