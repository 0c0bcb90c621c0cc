import fc from "fast-check"
import { randomBytes, randomUUID } from "node:crypto"
import { beforeAll, describe, expect, it } from "vitest"
import { type Reply, send } from "../support/http.js"
import { expectProblem, expectRateLimitHeaders } from "../support/problem.js"
import {
  acceptThroughPage,
  ageInvitation,
  createPatDirect,
  createTenantDirect,
  getPage,
  invite,
  inviteOk,
  invitationsPath,
  isoTimestamp,
  magicLinkFor,
  membersPath,
  postAcceptance,
  sevenDaysMs,
  ssoMember,
  uuid
} from "../support/provisioning.js"
import type { CreatedPat, CreatedTenant } from "../support/system.js"
import { useSystem } from "../support/useSystem.js"

// Many calls with one token and many invitations in one tenant: neither limit is the subject here.
const system = useSystem({
  RATE_LIMIT_PER_MINUTE: "100000",
  UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE: "100000",
  INVITATIONS_PER_TENANT_PER_HOUR: "100000"
})

const prefixed = (path: string) => `/api/v1${path}`

let tenant: CreatedTenant
let other: CreatedTenant
let admin: CreatedPat
let otherAdmin: CreatedPat

beforeAll(async () => {
  ;[tenant, other] = await Promise.all([system.createTenant("bb-prov"), system.createTenant("bb-prov-other")])
  ;[admin, otherAdmin] = await Promise.all([system.createPat(tenant, "write"), system.createPat(other, "write")])
}, 120_000)

const listInvitations = async (pat: CreatedPat = admin) => {
  const reply = await system.api(pat.token).get(invitationsPath)
  expect(reply.status, reply.text).toBe(200)
  return reply.body as Array<any>
}

const listMembers = async (pat: CreatedPat = admin) => {
  const reply = await system.api(pat.token).get(membersPath)
  expect(reply.status, reply.text).toBe(200)
  return reply.body as Array<any>
}

const invitationOf = async (id: string, pat: CreatedPat = admin) => (await listInvitations(pat)).find((i) => i.id === id)

const expectNoContent = (reply: Reply) => {
  expect({ status: reply.status, text: reply.text }).toEqual({ status: 204, text: "" })
}

/** The body of a problem, `instance` set aside: two refusals that must not tell each other apart. */
const withoutInstance = (reply: Reply) => ({ status: reply.status, contentType: reply.contentType, body: { ...reply.body, instance: "(path)" } })

describe("POST /tenant/invitations", () => {
  it("answers 201 with the Invitation: PENDING, expiring exactly 7 days after its creation, invited by the caller", async () => {
    const before = Date.now()
    const reply = await invite(system, admin, "  Ana.Lopez@Example.COM  ", "architect")
    const after = Date.now()
    expect({ status: reply.status, contentType: reply.contentType }).toEqual({
      status: 201,
      contentType: expect.stringMatching(/^application\/json/)
    })
    expectRateLimitHeaders(reply)
    expect(reply.body).toEqual({
      id: expect.stringMatching(uuid),
      email: "Ana.Lopez@Example.COM",
      arbRole: "architect",
      status: "PENDING",
      invitedByEmail: tenant.adminEmail,
      expiresAt: expect.stringMatching(isoTimestamp),
      createdAt: expect.stringMatching(isoTimestamp),
      acceptedAt: null,
      revokedAt: null
    })
    const createdAt = Date.parse(reply.body.createdAt)
    expect(Date.parse(reply.body.expiresAt) - createdAt).toBe(sevenDaysMs)
    // Same machine, same clock: the creation time lies within the request (to the millisecond).
    expect(createdAt >= before - 1 && createdAt <= after + 1, `${reply.body.createdAt} not within the request`).toBe(true)
    expect(await invitationOf(reply.body.id)).toEqual(reply.body)
  })

  it.each(["tenant-admin", "architect", "portfolio-manager", "contributor", "viewer", "arb-member"])("accepts the role %s", async (role) => {
    const reply = await invite(system, admin, `role-${role}@bb-prov.example`, role)
    expect({ status: reply.status, arbRole: reply.body.arbRole, status2: reply.body.status }).toEqual({ status: 201, arbRole: role, status2: "PENDING" })
  })

  it.each([
    ["no @", "ana.example.com"],
    ["no domain", "ana@"],
    ["no local part", "@example.com"],
    ["two @", "ana@b@example.com"],
    ["a space inside", "ana lopez@example.com"],
    ["no dot in the domain", "ana@localhost"],
    ["empty", ""],
    ["blank", "   "],
    ["too long", `${"a".repeat(250)}@example.com`]
  ])("answers 400 INVALID_INVITATION_PARAM for a malformed e-mail (%s)", async (_name, email) => {
    const reply = await invite(system, admin, email, "viewer")
    expectProblem(reply, "INVALID_INVITATION_PARAM", prefixed(invitationsPath))
  })

  it.each(["owner", "admin", "Tenant-Admin", "VIEWER", " viewer", "operator", ""])("answers 400 INVALID_INVITATION_PARAM for the role '%s'", async (role) => {
    const reply = await invite(system, admin, "unknown-role@bb-prov.example", role)
    expectProblem(reply, "INVALID_INVITATION_PARAM", prefixed(invitationsPath))
  })

  it("answers 400 INVALID_INVITATION_PARAM for an e-mail that is already a member, compared case-insensitively", async () => {
    for (const email of [tenant.adminEmail, tenant.adminEmail.toUpperCase(), ` ${tenant.adminEmail} `]) {
      const reply = await invite(system, admin, email, "viewer")
      expectProblem(reply, "INVALID_INVITATION_PARAM", prefixed(invitationsPath))
    }
    expect((await listInvitations()).filter((i) => i.email.trim().toLowerCase() === tenant.adminEmail)).toEqual([])
  })

  it("answers 409 ALREADY_INVITED (title Conflict) for a second PENDING invitation, whatever the case of the e-mail", async () => {
    const first = await inviteOk(system, admin, "twice@bb-prov.example", "viewer")
    for (const email of ["twice@bb-prov.example", "TWICE@bb-prov.example"]) {
      const reply = await invite(system, admin, email, "architect")
      expectProblem(reply, "ALREADY_INVITED", prefixed(invitationsPath))
      expect(reply.body.title).toBe("Conflict")
    }
    expect((await listInvitations()).filter((i) => i.email.toLowerCase() === "twice@bb-prov.example")).toEqual([first])
  })

  it("lets another tenant invite a person who is a member or invited here", async () => {
    await inviteOk(system, admin, "shared@bb-prov.example", "viewer")
    const elsewhere = await invite(system, otherAdmin, "shared@bb-prov.example", "viewer")
    expect(elsewhere.status).toBe(201)
    const adminHere = await invite(system, otherAdmin, tenant.adminEmail, "architect")
    expect(adminHere.status).toBe(201)
    expect((await listInvitations()).map((i) => i.id)).not.toContain(elsewhere.body.id)
  })
})

describe("lists, revocation and removal", () => {
  let listTenant: CreatedTenant
  let listAdmin: CreatedPat
  let ids: { accepted: string; revoked: string; expired: string; pending: string }
  let invitee: string
  let sso: any

  beforeAll(async () => {
    listTenant = await createTenantDirect(system, "bb-prov-lists")
    listAdmin = await createPatDirect(system, listTenant, "write")
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
    // The expired one was moved 8 days back, so it is the oldest.
    expect(list.map((i) => [i.id, i.status])).toEqual([
      [ids.pending, "PENDING"],
      [ids.revoked, "REVOKED"],
      [ids.accepted, "ACCEPTED"],
      [ids.expired, "EXPIRED"]
    ])
    for (const invitation of list) {
      expect(Object.keys(invitation).sort()).toEqual(
        ["acceptedAt", "arbRole", "createdAt", "email", "expiresAt", "id", "invitedByEmail", "revokedAt", "status"]
      )
      expect(Date.parse(invitation.expiresAt) - Date.parse(invitation.createdAt)).toBe(sevenDaysMs)
      expect(invitation.invitedByEmail).toBe(listTenant.adminEmail)
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
    expect({ code: human.code, lines: human.stdout.trim().split("\n").map((line) => line.split(/\s+/).slice(0, 3)) }).toEqual({
      code: 0,
      lines: [
        [ids.pending, "PENDING", "pending@bb-prov-lists.example"],
        [ids.revoked, "REVOKED", "revoked@bb-prov-lists.example"],
        [ids.accepted, "ACCEPTED", "accepted@bb-prov-lists.example"],
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
    const theirs = await inviteOk(system, otherAdmin, "theirs@bb-prov-other.example", "viewer")
    const unknownPath = `${invitationsPath}/${randomUUID()}`
    const theirsPath = `${invitationsPath}/${theirs.id}`
    const unknown = await system.api(listAdmin.token).del(unknownPath)
    const foreign = await system.api(listAdmin.token).del(theirsPath)
    expectProblem(unknown, "NOT_FOUND", prefixed(unknownPath))
    expectProblem(foreign, "NOT_FOUND", prefixed(theirsPath))
    expect(withoutInstance(foreign)).toEqual(withoutInstance(unknown))
    expect(await invitationOf(theirs.id, otherAdmin)).toEqual(theirs)
    // Not a UUID: an unknown id as well (decisions: "404 for an unknown id"), not a 400.
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
    const adminsTenant = await createTenantDirect(system, "bb-prov-admins")
    const first = await createPatDirect(system, adminsTenant, "write")
    const firstPath = `${membersPath}/${encodeURIComponent(adminsTenant.adminSub)}`
    const before = await listMembers(first)

    const alone = await system.api(first.token).del(firstPath)
    expectProblem(alone, "LAST_TENANT_ADMIN", prefixed(firstPath))
    expect(alone.body.detail).toMatch(/must keep one tenant-admin/)
    expect(await listMembers(first)).toEqual(before)

    const secondEmail = "second-admin@bb-prov-admins.example"
    await inviteOk(system, first, secondEmail, "tenant-admin")
    await acceptThroughPage(await magicLinkFor(system, secondEmail))
    const second = await createPatDirect(system, adminsTenant, "write", secondEmail)
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
    const email = "flow.person@bb-prov.example"
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

describe("concurrent duplicate invitations", () => {
  it("gives exactly one 201 and 99 409 ALREADY_INVITED for 100 simultaneous invitations of one e-mail", async () => {
    const email = "rush@bb-prov.example"
    const replies = await Promise.all(Array.from({ length: 100 }, () => invite(system, admin, email, "viewer")))
    const created = replies.filter((r) => r.status === 201)
    const conflicts = replies.filter((r) => r.status === 409)
    expect({ created: created.length, conflicts: conflicts.length, other: replies.filter((r) => r.status !== 201 && r.status !== 409).map((r) => `${r.status} ${r.text}`) })
      .toEqual({ created: 1, conflicts: 99, other: [] })
    for (const conflict of conflicts) expectProblem(conflict, "ALREADY_INVITED", prefixed(invitationsPath))
    expect((await listInvitations()).filter((i) => i.email === email)).toEqual([created[0]!.body])
    expect((await system.adminOk("provisioning", "GET", `/admin/mail?to=${email}`)).length).toBe(1)
  }, 120_000)
})

describe("magic links that cannot be used", () => {
  const tokenLink = (link: string, token: string) => link.replace(/[A-Za-z0-9_-]{43}$/, token)
  const secrets = { role: "portfolio-manager" }
  let links: { used: string; expired: string; revoked: string; random: string }
  let linkTenant: CreatedTenant
  let linkAdmin: CreatedPat

  beforeAll(async () => {
    linkTenant = await createTenantDirect(system, "bb-links-secret")
    linkAdmin = await createPatDirect(system, linkTenant, "write")
    const one = (kind: string) => `${kind}-linkee@bb-links-secret.example`

    await inviteOk(system, linkAdmin, one("used"), secrets.role)
    const used = await magicLinkFor(system, one("used"))
    await acceptThroughPage(used)

    const expiring = await inviteOk(system, linkAdmin, one("expired"), secrets.role)
    const expired = await magicLinkFor(system, one("expired"))
    // Open while valid (control), then moved 8 days back: the SQL is only the clock.
    expect((await getPage(expired)).status).toBe(200)
    await ageInvitation(system, expiring.id)

    const revoking = await inviteOk(system, linkAdmin, one("revoked"), secrets.role)
    const revoked = await magicLinkFor(system, one("revoked"))
    expectNoContent(await system.api(linkAdmin.token).del(`${invitationsPath}/${revoking.id}`))

    links = { used, expired, revoked, random: tokenLink(used, randomBytes(32).toString("base64url")) }
  }, 120_000)

  it("answers the same page for a used, an expired, a revoked and a random link, naming neither the person nor the tenant nor the role", async () => {
    const pages = await Promise.all(Object.values(links).map(getPage))
    const [first] = pages
    for (const page of pages) {
      expect({ status: page.status, text: page.text, contentType: page.contentType }).toEqual({
        status: first!.status,
        text: first!.text,
        contentType: expect.stringMatching(/^text\/html/)
      })
    }
    expect(first!.status).toBeGreaterThanOrEqual(400)
    expect(first!.text).not.toMatch(/<form/i)
    const lower = first!.text.toLowerCase()
    for (const secret of ["linkee", "bb-links-secret", secrets.role, "@"]) {
      expect(lower, `the refusal page reveals '${secret}'`).not.toContain(secret)
    }
  })

  it("refuses a password posted through those links with the same page, and accepts nothing", async () => {
    const before = await listInvitations(linkAdmin)
    const membersBefore = await listMembers(linkAdmin)
    const reference = await getPage(links.random)
    for (const link of Object.values(links)) {
      const reply = await postAcceptance(link, "a perfectly fine password")
      expect({ status: reply.status, text: reply.text }).toEqual({ status: reference.status, text: reference.text })
    }
    expect(await listInvitations(linkAdmin)).toEqual(before)
    expect(await listMembers(linkAdmin)).toEqual(membersBefore)
    expect(before.map((i) => i.status)).toEqual(["REVOKED", "ACCEPTED", "EXPIRED"])
  })

  it("lets an expired invitation's e-mail be invited again", async () => {
    const again = await invite(system, linkAdmin, "expired-linkee@bb-links-secret.example", "viewer")
    expect({ status: again.status, state: again.body.status }).toEqual({ status: 201, state: "PENDING" })
    expect((await listInvitations(linkAdmin)).map((i) => i.status)).toEqual(["PENDING", "REVOKED", "ACCEPTED", "EXPIRED"])
  })

  it("answers malformed tokens with the same page as the others", async () => {
    const reference = await getPage(links.random)
    for (const token of ["short", "x".repeat(44), "%00", "a".repeat(42) + "!"]) {
      const reply = await send(`${new URL(links.used).origin}/accept/${token}`)
      expect({ status: reply.status, text: reply.text }).toEqual({ status: reference.status, text: reference.text })
    }
  })
})

describe("property: bad invitation bodies", () => {
  let fuzzTenant: CreatedTenant
  let fuzzAdmin: CreatedPat
  const memberEmail = "member@bb-prov-fuzz.example"

  beforeAll(async () => {
    fuzzTenant = await createTenantDirect(system, "bb-prov-fuzz", memberEmail)
    fuzzAdmin = await createPatDirect(system, fuzzTenant, "write")
  }, 120_000)

  const roleNames = ["tenant-admin", "architect", "portfolio-manager", "contributor", "viewer", "arb-member"]
  const validEmail = fc.constantFrom("new@bb-prov-fuzz.example", "Someone.Else@Example.org")
  const validRole = fc.constantFrom(...roleNames)
  const notAString = fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 2 }), fc.dictionary(fc.string({ maxLength: 3 }), fc.string({ maxLength: 3 }), { maxKeys: 2 }))
  const malformedEmail = fc.oneof(
    fc.string({ maxLength: 30 }).filter((s) => !s.includes("@")),
    fc.tuple(fc.string({ maxLength: 10 }), fc.string({ maxLength: 10 })).map(([a, b]) => `${a}@${b}@x.example`),
    fc.string({ minLength: 1, maxLength: 10 }).filter((s) => !s.includes("@")).map((s) => `${s}@`),
    fc.constantFrom("", " ", "a b@example.com", "ana@localhost", "ana@-example.com", `${"x".repeat(250)}@example.com`, "ana@exa mple.com")
  )
  const unknownRole = fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom(...roleNames.map((r) => r.toUpperCase()), ...roleNames.map((r) => ` ${r}`), "operator", "admin", "owner"))
    .filter((r) => !roleNames.includes(r))
  const memberVariant = fc.constantFrom(memberEmail, memberEmail.toUpperCase(), ` ${memberEmail}`, "Member@BB-Prov-Fuzz.example")

  /** Each bad body with the errorCode the decision gives it, when only one is right. */
  const badBody = fc.oneof(
    fc.record({ email: malformedEmail, arbRole: validRole }).map((body) => ({ body, code: "INVALID_INVITATION_PARAM" })),
    fc.record({ email: validEmail, arbRole: unknownRole }).map((body) => ({ body, code: "INVALID_INVITATION_PARAM" })),
    fc.record({ email: memberVariant, arbRole: validRole }).map((body) => ({ body, code: "INVALID_INVITATION_PARAM" })),
    fc.record({ email: notAString, arbRole: validRole }).map((body) => ({ body, code: "INVALID_REQUEST" })),
    fc.record({ email: validEmail, arbRole: notAString }).map((body) => ({ body, code: "INVALID_REQUEST" })),
    fc.record({ arbRole: validRole }).map((body) => ({ body, code: "INVALID_REQUEST" })),
    fc.record({ email: validEmail }).map((body) => ({ body, code: "INVALID_REQUEST" })),
    fc.oneof(fc.integer(), fc.string({ maxLength: 10 }), fc.constant(null), fc.array(fc.integer(), { maxLength: 3 }))
      .map((value) => ({ body: JSON.stringify(value), code: "INVALID_REQUEST" })),
    fc.constantFrom("{", "{\"email\":", "not json", "{\"email\":\"a@b.example\",\"arbRole\":\"viewer\"", "")
      .map((body) => ({ body, code: "INVALID_REQUEST" }))
  )

  it("answers 400 problem+json with the decided errorCode, never a 5xx, and the invitation list is unchanged", async () => {
    const before = await listInvitations(fuzzAdmin)
    await fc.assert(
      fc.asyncProperty(badBody, async ({ body, code }) => {
        const reply = await system.api(fuzzAdmin.token).post(invitationsPath, {
          body: typeof body === "string" ? body : JSON.stringify(body),
          headers: { "content-type": "application/json" }
        })
        expect(reply.status, `${JSON.stringify(body)} -> ${reply.status} ${reply.text}`).toBe(400)
        expectProblem(reply, code as "INVALID_REQUEST" | "INVALID_INVITATION_PARAM", prefixed(invitationsPath))
      }),
      { numRuns: 60 }
    )
    expect(await listInvitations(fuzzAdmin)).toEqual(before)
    expect(before).toEqual([])
  }, 120_000)
})
