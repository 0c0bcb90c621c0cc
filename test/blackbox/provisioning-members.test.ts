import { randomUUID } from "node:crypto"
import { beforeAll, describe, expect, it } from "vitest"
import { send } from "../support/http.js"
import { expectNoContent, expectProblem, expectRateLimitHeaders, prefixed, withoutInstance } from "../support/problem.js"
import {
  acceptThroughPage,
  ageInvitation,
  getPage,
  invite,
  inviteOk,
  invitationsPath,
  isoTimestamp,
  isWelcomeOf,
  magicLinkFor,
  membersPath,
  postAcceptance,
  sevenDaysMs,
  ssoMember,
  tenantLists,
  twoTenants
} from "../support/provisioning.js"
import { type CreatedPat, type CreatedTenant, operatorIdentity } from "../support/system.js"
import { useSharedSystem } from "../support/useSystem.js"

const system = useSharedSystem()

let tenant: CreatedTenant
let other: CreatedTenant
let admin: CreatedPat
let otherAdmin: CreatedPat

beforeAll(async () => {
  ;({ tenant, other, admin, otherAdmin } = await twoTenants(system, "bb-members"))
}, 120_000)

const { listInvitations, listMembers, invitationOf } = tenantLists(system, () => admin)

describe("lists, revocation and removal", () => {
  let listTenant: CreatedTenant
  let listAdmin: CreatedPat
  let ids: { accepted: string; revoked: string; expired: string; pending: string }
  let invitee: string
  let sso: any

  beforeAll(async () => {
    listTenant = await system.createTenant("bb-prov-lists")
    listAdmin = await system.createPat(listTenant, "write")
    const expired = await inviteOk(system, listAdmin, "expired@bb-prov-lists.example", "viewer")
    await ageInvitation(system, expired.id)
    const accepted = await inviteOk(system, listAdmin, "accepted@bb-prov-lists.example", "contributor")
    await acceptThroughPage(await magicLinkFor(system, "accepted@bb-prov-lists.example"))
    const revoked = await inviteOk(system, listAdmin, "revoked@bb-prov-lists.example", "architect")
    expectNoContent(await system.api(listAdmin.token).del(`${invitationsPath}/${revoked.id}`))
    const pending = await inviteOk(system, listAdmin, "pending@bb-prov-lists.example", "arb-member")
    ids = { expired: expired.id, accepted: accepted.id, revoked: revoked.id, pending: pending.id }
    invitee = "accepted@bb-prov-lists.example"
    sso = await ssoMember(system, listTenant, `oidc|${randomUUID()}`, "sso@bb-prov-lists.example", "portfolio-manager")
  }, 120_000)

  it("GET /tenant/invitations answers every invitation whatever its status, newest first, as a plain array", async () => {
    const list = await listInvitations(listAdmin)
    const welcome = list.find(isWelcomeOf(listTenant))
    // The expired one was moved 8 days back, so it is the oldest; the admin's welcome link was made
    // with the tenant, before the others.
    expect(list.map((i) => [i.id, i.status])).toEqual([
      [ids.pending, "PENDING"],
      [ids.revoked, "REVOKED"],
      [ids.accepted, "ACCEPTED"],
      [welcome?.id, "PENDING"],
      [ids.expired, "EXPIRED"]
    ])
    for (const invitation of list) {
      expect(Object.keys(invitation).sort()).toEqual(
        ["acceptedAt", "arbRole", "createdAt", "email", "expiresAt", "id", "invitedByEmail", "revokedAt", "status"]
      )
      expect(Date.parse(invitation.expiresAt) - Date.parse(invitation.createdAt)).toBe(sevenDaysMs)
      // The welcome link names the operator who created the tenant; the others, the inviting admin.
      expect(invitation.invitedByEmail).toBe(invitation === welcome ? operatorIdentity.subject : listTenant.adminEmail)
    }
    const byId = new Map(list.map((i) => [i.id, i]))
    expect(byId.get(ids.accepted)).toMatchObject({ acceptedAt: expect.stringMatching(isoTimestamp), revokedAt: null })
    expect(byId.get(ids.revoked)).toMatchObject({ acceptedAt: null, revokedAt: expect.stringMatching(isoTimestamp) })
    expect(byId.get(ids.expired)).toMatchObject({ acceptedAt: null, revokedAt: null })
    expect(Date.parse(byId.get(ids.expired).expiresAt)).toBeLessThan(Date.now())
  })

  it("`portfolio invitations list --tenant <slug> --json` shows the operator the same list", async () => {
    expect(await system.cliJson(["invitations", "list", "--tenant", listTenant.slug])).toEqual(await listInvitations(listAdmin))
    const human = await system.cli(["invitations", "list", "--tenant", listTenant.slug])
    const welcome = (await listInvitations(listAdmin)).find(isWelcomeOf(listTenant))
    expect({ code: human.code, lines: human.stdout.trim().split("\n").map((line) => line.split(/\s+/).slice(0, 3)) }).toEqual({
      code: 0,
      lines: [
        [ids.pending, "PENDING", "pending@bb-prov-lists.example"],
        [ids.revoked, "REVOKED", "revoked@bb-prov-lists.example"],
        [ids.accepted, "ACCEPTED", "accepted@bb-prov-lists.example"],
        [welcome?.id, "PENDING", listTenant.adminEmail],
        [ids.expired, "EXPIRED", "expired@bb-prov-lists.example"]
      ]
    })
    const unknown = await system.cli(["invitations", "list", "--tenant", "bb-no-such-tenant", "--json"])
    expect({ code: unknown.code, stdout: unknown.stdout, errorCode: JSON.parse(unknown.stderr).errorCode }).toEqual({ code: 1, stdout: "", errorCode: "NOT_FOUND" })
  }, 120_000)

  it("GET /tenant/invitations/members answers the active members, newest first, with the fields of Member", async () => {
    const members = await listMembers(listAdmin)
    expect(members).toEqual([
      { userSub: sso.userSub, userEmail: "sso@bb-prov-lists.example", arbRole: "portfolio-manager", source: "SSO_JIT", grantedAt: expect.stringMatching(isoTimestamp) },
      { userSub: expect.any(String), userEmail: invitee, arbRole: "contributor", source: "INVITATION", grantedAt: expect.stringMatching(isoTimestamp) },
      { userSub: listTenant.adminSub, userEmail: listTenant.adminEmail, arbRole: "tenant-admin", source: "SIGNUP", grantedAt: expect.stringMatching(isoTimestamp) }
    ])
  })

  it("DELETE /tenant/invitations/{id} revokes a PENDING invitation: 204 without body, then 409 INVITATION_NOT_PENDING", async () => {
    const invitation = await inviteOk(system, listAdmin, "to-revoke@bb-prov-lists.example", "viewer")
    const path = `${invitationsPath}/${invitation.id}`
    const first = await system.api(listAdmin.token).del(path)
    expectNoContent(first)
    expectRateLimitHeaders(first)
    expect(await invitationOf(invitation.id, listAdmin)).toEqual({ ...invitation, status: "REVOKED", revokedAt: expect.stringMatching(isoTimestamp) })
    expectProblem(await system.api(listAdmin.token).del(path), "INVITATION_NOT_PENDING", prefixed(path))
    // A revoked invitation no longer blocks a new one for the same e-mail.
    expect((await invite(system, listAdmin, "to-revoke@bb-prov-lists.example", "viewer")).status).toBe(201)
  })

  it("answers 409 INVITATION_NOT_PENDING for revoking an accepted or an expired invitation, and changes nothing", async () => {
    const before = await listInvitations(listAdmin)
    for (const id of [ids.accepted, ids.expired, ids.revoked]) {
      const path = `${invitationsPath}/${id}`
      expectProblem(await system.api(listAdmin.token).del(path), "INVITATION_NOT_PENDING", prefixed(path))
    }
    expect(await listInvitations(listAdmin)).toEqual(before)
  })

  it("answers 404 for an unknown invitation id, another tenant's and one that is not a UUID, with the same body", async () => {
    const theirs = await inviteOk(system, otherAdmin, "theirs@bb-members-other.example", "viewer")
    const unknownPath = `${invitationsPath}/${randomUUID()}`
    const theirsPath = `${invitationsPath}/${theirs.id}`
    const unknown = await system.api(listAdmin.token).del(unknownPath)
    const foreign = await system.api(listAdmin.token).del(theirsPath)
    expectProblem(unknown, "NOT_FOUND", prefixed(unknownPath))
    expectProblem(foreign, "NOT_FOUND", prefixed(theirsPath))
    expect(withoutInstance(foreign)).toEqual(withoutInstance(unknown))
    expect(await invitationOf(theirs.id, otherAdmin)).toEqual(theirs)
    // Not a UUID: an unknown id as well (docs/product-rules.md#invitations-and-members: 404 for an unknown id), not a 400.
    for (const malformed of ["not-a-uuid", "42", theirs.id.toUpperCase().replace(/-/g, ""), `${theirs.id}0`, "%00"]) {
      const path = `${invitationsPath}/${malformed}`
      const reply = await system.api(listAdmin.token).del(path)
      expectProblem(reply, "NOT_FOUND", prefixed(path))
      expect(withoutInstance(reply)).toEqual(withoutInstance(unknown))
    }
  })

  it("DELETE /tenant/invitations/members/{userSub} removes a member: 204 without body; irreversible; the person can be invited again", async () => {
    const email = "leaving@bb-prov-lists.example"
    const member = await ssoMember(system, listTenant, `oidc|${randomUUID()}`, email, "viewer")
    const path = `${membersPath}/${encodeURIComponent(member.userSub)}`
    const removal = await system.api(listAdmin.token).del(path)
    expectNoContent(removal)
    expect((await listMembers(listAdmin)).map((m) => m.userSub)).not.toContain(member.userSub)
    expectProblem(await system.api(listAdmin.token).del(path), "NOT_FOUND", prefixed(path))
    const again = await invite(system, listAdmin, email, "architect")
    expect({ status: again.status, email: again.body.email, arbRole: again.body.arbRole }).toEqual({ status: 201, email, arbRole: "architect" })
  })

  it("answers 404 with the same body for an unknown userSub and for a userSub that exists only in another tenant", async () => {
    const unknownPath = `${membersPath}/no-such-user-${randomUUID()}`
    const foreignPath = `${membersPath}/${encodeURIComponent(other.adminSub)}`
    const unknown = await system.api(listAdmin.token).del(unknownPath)
    const foreign = await system.api(listAdmin.token).del(foreignPath)
    expectProblem(unknown, "NOT_FOUND", prefixed(unknownPath))
    expectProblem(foreign, "NOT_FOUND", prefixed(foreignPath))
    expect(withoutInstance(foreign)).toEqual(withoutInstance(unknown))
    expect((await listMembers(otherAdmin)).map((m) => m.userSub)).toContain(other.adminSub)
  })

  it("never shows another tenant's invitations or members", async () => {
    const [mine, theirs] = await Promise.all([listInvitations(listAdmin), listInvitations(otherAdmin)])
    const theirIds = new Set(theirs.map((i) => i.id))
    expect(mine.filter((i) => theirIds.has(i.id))).toEqual([])
    const [myMembers, theirMembers] = await Promise.all([listMembers(listAdmin), listMembers(otherAdmin)])
    expect(myMembers.map((m) => m.userSub)).not.toContain(other.adminSub)
    expect(theirMembers.map((m) => m.userSub)).not.toContain(listTenant.adminSub)
  })
})

describe("the last tenant-admin", () => {
  it("refuses to remove a tenant's last active tenant-admin with 409 LAST_TENANT_ADMIN; removing oneself is allowed while another remains", async () => {
    const adminsTenant = await system.createTenant("bb-prov-admins")
    const first = await system.createPat(adminsTenant, "write")
    const firstPath = `${membersPath}/${encodeURIComponent(adminsTenant.adminSub)}`
    const before = await listMembers(first)

    const alone = await system.api(first.token).del(firstPath)
    expectProblem(alone, "LAST_TENANT_ADMIN", prefixed(firstPath))
    expect(alone.body.detail).toMatch(/must keep one tenant-admin/)
    expect(await listMembers(first)).toEqual(before)

    const secondEmail = "second-admin@bb-prov-admins.example"
    await inviteOk(system, first, secondEmail, "tenant-admin")
    await acceptThroughPage(await magicLinkFor(system, secondEmail))
    const second = await system.createPat(adminsTenant, "write", secondEmail)
    const secondSub = (await listMembers(second)).find((m) => m.userEmail === secondEmail).userSub
    expectNoContent(await system.api(first.token).del(firstPath))

    const secondPath = `${membersPath}/${encodeURIComponent(secondSub)}`
    expectProblem(await system.api(second.token).del(secondPath), "LAST_TENANT_ADMIN", prefixed(secondPath))
    expect((await listMembers(second)).map((m) => [m.userEmail, m.arbRole])).toEqual([[secondEmail, "tenant-admin"]])
  }, 120_000)

  it("documents the 409 LAST_TENANT_ADMIN of DELETE /tenant/invitations/members/{userSub}", async () => {
    const document = await send(`${system.baseUrl}/openapi.json`)
    const removal = document.body.paths["/tenant/invitations/members/{userSub}"].delete
    expect(JSON.stringify(removal.responses["409"])).toContain("LAST_TENANT_ADMIN")
    expect(removal.description).toContain("LAST_TENANT_ADMIN")
  })
})

describe("the full flow", () => {
  it("invite -> mail -> acceptance page -> member with source INVITATION -> PAT works -> removal -> 401 within 1 s -> invited again", async () => {
    const email = "flow.person@bb-members.example"
    const invitation = await inviteOk(system, admin, email, "contributor")

    const link = await magicLinkFor(system, email, "cli")
    // Built on the configured public URL of provisioning, not on the gateway's address.
    expect(link.startsWith(system.baseUrl)).toBe(false)
    const form = await getPage(link)
    expect({ status: form.status, contentType: form.contentType }).toEqual({ status: 200, contentType: expect.stringMatching(/^text\/html/) })
    expect(form.text).toMatch(/<form[^>]*method="post"/i)
    expect(form.text).toMatch(/<input[^>]*name="password"[^>]*type="password"/i)
    expect(form.text).toContain(email)
    expect(await invitationOf(invitation.id)).toEqual(invitation)

    const mismatch = await postAcceptance(link, "correct horse battery staple", "another horse battery staple")
    expect(mismatch.status).toBe(400)
    expect(mismatch.text).toMatch(/<form/i)
    expect((await invitationOf(invitation.id)).status).toBe("PENDING")

    const done = await postAcceptance(link, "correct horse battery staple")
    expect({ status: done.status, contentType: done.contentType }).toEqual({ status: 200, contentType: expect.stringMatching(/^text\/html/) })
    expect(done.text).not.toMatch(/<form/i)

    const members = await listMembers()
    const member = members.find((m) => m.userEmail === email)
    expect(member).toEqual({ userSub: expect.any(String), userEmail: email, arbRole: "contributor", source: "INVITATION", grantedAt: expect.stringMatching(isoTimestamp) })
    expect(members[0]).toEqual(member)
    expect(await invitationOf(invitation.id)).toEqual({ ...invitation, status: "ACCEPTED", acceptedAt: expect.stringMatching(isoTimestamp) })
    // Now a member: inviting the same e-mail is a 400.
    expectProblem(await invite(system, admin, email.toUpperCase(), "viewer"), "INVALID_INVITATION_PARAM", prefixed(invitationsPath))

    const created = await system.cliJson(["pat", "create", "--tenant", tenant.slug, "--email", email, "--scope", "read"])
    expect({ email: created.email, userSub: created.userSub, scope: created.scope }).toEqual({ email, userSub: member.userSub, scope: "read" })
    const theirs = system.api(created.token)
    const working = await theirs.get("/referentiel/applications")
    expect({ status: working.status, body: working.body }).toEqual({ status: 200, body: [] })
    // A contributor is not tenant-admin: the provisioning endpoints stay closed to them.
    expectProblem(await theirs.get(invitationsPath), "INSUFFICIENT_SCOPE", prefixed(invitationsPath))

    const removal = await system.api(admin.token).del(`${membersPath}/${encodeURIComponent(member.userSub)}`)
    expectNoContent(removal)
    const removedAt = Date.now()
    let reply = await theirs.get("/referentiel/applications")
    while (reply.status !== 401 && Date.now() - removedAt < 1000) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      reply = await theirs.get("/referentiel/applications")
    }
    expect(reply.status, `the removed member's PAT still answered ${reply.status} ${Date.now() - removedAt} ms after the removal`).toBe(401)
    expectProblem(reply, "UNAUTHENTICATED", "/api/v1/referentiel/applications")
    expect((await listMembers()).map((m) => m.userSub)).not.toContain(member.userSub)

    const again = await invite(system, admin, email, "viewer")
    expect({ status: again.status, email: again.body.email, arbRole: again.body.arbRole, statusOf: again.body.status }).toEqual({
      status: 201,
      email,
      arbRole: "viewer",
      statusOf: "PENDING"
    })
  }, 120_000)
})
