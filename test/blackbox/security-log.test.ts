import { beforeAll, describe, expect, it } from "vitest"
import { send } from "../support/http.js"
import { invitationsPath, membersPath, ssoMember } from "../support/provisioning.js"
import type { CreatedPat, CreatedTenant } from "../support/system.js"
import { useSharedSystem } from "../support/useSystem.js"

const system = useSharedSystem()

interface Entry {
  readonly action: string
  readonly actorSub: string | null
  readonly actorEmail: string
  readonly target: string | null
  readonly ip: string
  readonly userAgent: string
  readonly detail: Record<string, unknown>
}

let tenant: CreatedTenant
let admin: CreatedPat

beforeAll(async () => {
  tenant = await system.createTenant("bb-audit")
  admin = await system.createPat(tenant, "write")
}, 60_000)

const publicCall = (method: string, path: string, body?: unknown) =>
  send(`${system.baseUrl}${path}`, {
    method,
    token: admin.token,
    headers: { "user-agent": "bb-audit-agent/1.0", ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })

describe("the security log, whichever door an action came through (portfolio audit)", () => {
  it("holds the operator's CLI actions (gateway, provisioning) and a tenant-admin's public API actions, each once, with who and from where", async () => {
    const invited = await publicCall("POST", invitationsPath, { email: "new@bb-audit.example", arbRole: "viewer" })
    expect(invited.status).toBe(201)
    const invitationId = JSON.parse(invited.text).id as string
    expect((await publicCall("DELETE", `${invitationsPath}/${invitationId}`)).status).toBe(204)
    const leaving = await ssoMember(system, tenant, "oidc|bb-audit-leaving", "leaving@bb-audit.example", "viewer")
    expect((await publicCall("DELETE", `${membersPath}/${encodeURIComponent(leaving.userSub)}`)).status).toBe(204)
    // Refused: a second revocation of the same invitation changes nothing and records nothing.
    expect((await publicCall("DELETE", `${invitationsPath}/${invitationId}`)).status).toBe(409)

    const request = await system.cliJson([
      "pat", "request", "--tenant", tenant.slug, "--email", tenant.adminEmail, "--scope", "read", "--days", "7",
      "--justification", "Reads the referential for the audit test."
    ])
    const approved = await system.cliJson(["pat", "approve", request.id])
    const partner = await system.cliJson(["partner", "create", "--tenant", tenant.slug, "--name", "bb-audit-erp", "--scope", "read"])

    const entries: ReadonlyArray<Entry> = await system.cliJson(["audit", "--tenant", tenant.slug])
    const seen = entries.map((e) => `${e.action} ${e.target}`)
    const expectedTargets = [
      `member_invited ${invitationId}`,
      `invitation_revoked ${invitationId}`,
      `member_removed ${leaving.userSub}`,
      `pat_created ${admin.id}`,
      `pat_requested ${request.id}`,
      `pat_request_approved ${request.id}`,
      `partner_client_created ${partner.client_id}`
    ]
    for (const wanted of expectedTargets) expect(seen.filter((s) => s === wanted), wanted).toHaveLength(1)
    // The refused second revocation recorded nothing: one entry of any kind names it per action.
    expect(seen.filter((s) => s.endsWith(invitationId))).toEqual([`invitation_revoked ${invitationId}`, `member_invited ${invitationId}`])

    const one = (action: string) => entries.find((e) => e.action === action)!
    // The public API's: by the token's holder, with the user agent the caller sent through the gateway.
    for (const action of ["member_invited", "invitation_revoked", "member_removed"]) {
      const entry = entries.find((e) => e.action === action && e.actorEmail === tenant.adminEmail)
      expect(entry, action).toMatchObject({ actorSub: tenant.adminSub, userAgent: "bb-audit-agent/1.0" })
      expect(entry!.ip).toMatch(/^(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)$/)
    }
    expect(one("invitation_revoked").detail).toEqual({ email: "new@bb-audit.example" })
    // The operator's: by their name, no e-mail; never a token or a secret.
    for (const action of ["pat_created", "pat_requested", "pat_request_approved", "partner_client_created"]) {
      expect(one(action).actorSub, action).toMatch(/^operator:/)
      expect(one(action).actorEmail).toBe("")
    }
    expect(one("pat_request_approved").detail).toMatchObject({ requester: tenant.adminEmail, scope: "read", tokenPrefix: approved.pat.tokenPrefix })
    const welcome = entries.find((e) => e.action === "member_invited" && e.detail["kind"] === "welcome")
    expect(welcome).toMatchObject({ actorEmail: "", detail: { email: tenant.adminEmail, role: "tenant-admin", kind: "welcome" } })
    const text = JSON.stringify(entries)
    expect(text).not.toContain(admin.token)
    expect(text).not.toContain(approved.pat.token)
    expect(text).not.toContain(partner.client_secret)
  })
})
