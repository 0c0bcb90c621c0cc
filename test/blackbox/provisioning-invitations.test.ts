import fc from "fast-check"
import { randomBytes } from "node:crypto"
import { beforeAll, describe, expect, it } from "vitest"
import { send } from "../support/http.js"
import { expectNoContent, expectProblem, expectRateLimitHeaders, prefixed } from "../support/problem.js"
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
  postAcceptance,
  sevenDaysMs,
  tenantLists,
  twoTenants,
  uuid
} from "../support/provisioning.js"
import type { CreatedPat, CreatedTenant } from "../support/system.js"
import { useSharedSystem } from "../support/useSystem.js"

const system = useSharedSystem()

let tenant: CreatedTenant
let admin: CreatedPat
let otherAdmin: CreatedPat

beforeAll(async () => {
  ;({ tenant, admin, otherAdmin } = await twoTenants(system, "bb-prov"))
}, 120_000)

const { listInvitations, listMembers, invitationOf } = tenantLists(system, () => admin)

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
    // Nothing but the admin's own welcome link, made with the tenant.
    expect((await listInvitations()).filter((i) => i.email.trim().toLowerCase() === tenant.adminEmail && !isWelcomeOf(tenant)(i))).toEqual([])
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
    linkTenant = await system.createTenant("bb-links-secret")
    linkAdmin = await system.createPat(linkTenant, "write")
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
    expect(before.filter((i) => !isWelcomeOf(linkTenant)(i)).map((i) => i.status)).toEqual(["REVOKED", "ACCEPTED", "EXPIRED"])
  })

  it("lets an expired invitation's e-mail be invited again", async () => {
    const again = await invite(system, linkAdmin, "expired-linkee@bb-links-secret.example", "viewer")
    expect({ status: again.status, state: again.body.status }).toEqual({ status: 201, state: "PENDING" })
    expect((await listInvitations(linkAdmin)).filter((i) => !isWelcomeOf(linkTenant)(i)).map((i) => i.status)).toEqual(["PENDING", "REVOKED", "ACCEPTED", "EXPIRED"])
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
    fuzzTenant = await system.createTenant("bb-prov-fuzz", memberEmail)
    fuzzAdmin = await system.createPat(fuzzTenant, "write")
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

  /** Each bad body with the errorCode docs/product-rules.md#invitations-and-members gives it, when only one is right. */
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
    // Nothing but the admin's own welcome link, made with the tenant.
    expect(before.filter((i) => !isWelcomeOf(fuzzTenant)(i))).toEqual([])
  }, 120_000)
})

describe("the first tenant-admin's welcome link", () => {
  it("`portfolio tenant create` mails the new admin a link that sets their password through the page and keeps their one membership", async () => {
    const slug = "bb-welcome"
    const email = "first.admin@bb-welcome.example"
    const created = await system.cli(["tenant", "create", slug, "--admin-email", email])
    expect(created.code, created.stderr).toBe(0)
    expect(created.stdout).toMatch(/^A link to set a password was mailed to first\.admin@bb-welcome\.example, valid until \d{4}-\d{2}-\d{2}T[\d:.]+Z\.$/m)
    const mail = await system.cliJson(["mail", "list", "--to", email])
    expect(mail.map((m: any) => m.subject)).toEqual(["Your workspace bb-welcome is ready: set your password"])

    const link = await magicLinkFor(system, email, "cli")
    const form = await getPage(link)
    expect(form.text).toContain("<title>Set your password</title>")
    await acceptThroughPage(link)
    expect((await getPage(link)).status).toBe(404)

    const { member, tenant: welcomed } = await system.adminOk("provisioning", "GET", `/admin/tenants/${slug}/members/${email}`)
    const pat = await system.createPat({ slug, id: welcomed.id, adminEmail: email, adminSub: member.userSub }, "read")
    const lists = tenantLists(system, () => pat)
    expect((await lists.listMembers()).map((m) => [m.userSub, m.userEmail, m.arbRole, m.source])).toEqual([[member.userSub, email, "tenant-admin", "SIGNUP"]])
    const [welcome, ...others] = await lists.listInvitations()
    expect(others).toEqual([])
    expect(welcome).toMatchObject({ email, arbRole: "tenant-admin", status: "ACCEPTED", invitedByEmail: expect.stringMatching(/^operator:/) })

    // The account has a password now: the next tenant of that person mails nothing.
    const again = await system.cliJson(["tenant", "create", `${slug}-two`, "--admin-email", email])
    expect(again).toMatchObject({ adminUserSub: member.userSub, welcome: null })
    expect(await system.cliJson(["mail", "list", "--to", email])).toHaveLength(1)
  }, 120_000)
})
