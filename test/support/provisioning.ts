import pg from "pg"
import { expect } from "vitest"
import { send, type Reply } from "./http.js"
import type { CreatedPat, CreatedTenant, Harness } from "./system.js"

/** The six assignable roles (docs/product-rules.md#invitations-and-members). */
export const roles = ["tenant-admin", "architect", "portfolio-manager", "contributor", "viewer", "arb-member"] as const
export type Role = (typeof roles)[number]

export const invitationsPath = "/tenant/invitations"
export const membersPath = "/tenant/invitations/members"

export const isoTimestamp = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/
export const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

export const sevenDaysMs = 7 * 24 * 60 * 60 * 1000

/** For files making many calls with one token and many invitations in one tenant: no limit is their subject. */
export const limitsOff = {
  RATE_LIMIT_PER_MINUTE: "100000",
  UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE: "100000",
  INVITATIONS_PER_TENANT_PER_HOUR: "100000"
}

/** A tenant `slug` and another one, each with a write PAT of its admin, made on the admin APIs as the CLI makes them. */
export const twoTenants = async (system: Harness, slug: string) => {
  const [tenant, other] = await Promise.all([system.createTenant(slug), system.createTenant(`${slug}-other`)])
  const [admin, otherAdmin] = await Promise.all([system.createPat(tenant, "write"), system.createPat(other, "write")])
  return { tenant, other, admin, otherAdmin }
}

export const invite = (system: Harness, pat: CreatedPat, email: string, arbRole: string) =>
  system.api(pat.token).post(invitationsPath, { body: { email, arbRole } })

/** An invitation that must be created; answers its body. */
export const inviteOk = async (system: Harness, pat: CreatedPat, email: string, arbRole: string) => {
  const reply = await invite(system, pat, email, arbRole)
  if (reply.status !== 201) throw new Error(`inviting ${email} answered ${reply.status}: ${reply.text}`)
  return reply.body
}

const magicLink = /https?:\/\/[^\s"<>]+\/accept\/[A-Za-z0-9_-]{43}/g

/**
 * The magic link of the newest mail to `email`. `via: "cli"` reads it as an operator would, with
 * `portfolio mail list --to <email> --json`; otherwise straight from the admin API the CLI calls
 * (no CLI process to start: seconds saved on this 2-core machine).
 */
export const magicLinkFor = async (system: Harness, email: string, via: "cli" | "admin" = "admin"): Promise<string> => {
  const mail = via === "cli"
    ? await system.cliJson(["mail", "list", "--to", email])
    : await system.adminOk("provisioning", "GET", `/admin/mail?to=${encodeURIComponent(email)}`)
  if (!Array.isArray(mail) || mail.length === 0) throw new Error(`no mail kept for ${email}: ${JSON.stringify(mail)}`)
  const links = String(mail[0].text).match(magicLink)
  if (links === null) throw new Error(`no magic link in the mail to ${email}: ${mail[0].text}`)
  return links[0]!
}

/**
 * Whether an invitation is the welcome link of the tenant's first admin, made with the tenant for
 * an account without a password (docs/product-rules.md#invitations-and-members): their e-mail, as
 * tenant-admin. Files about the invitations tenant-admins send leave it aside.
 */
export const isWelcomeOf = (tenant: CreatedTenant) => (invitation: { readonly email: string; readonly arbRole: string }) =>
  invitation.email === tenant.adminEmail && invitation.arbRole === "tenant-admin"

/**
 * The two lists a tenant-admin reads, as `pat` sees them; `defaultPat` is the test file's own admin,
 * asked for at each call because it exists only once the file's beforeAll has run.
 */
export const tenantLists = (system: Harness, defaultPat: () => CreatedPat) => {
  const listInvitations = async (pat: CreatedPat = defaultPat()) => {
    const reply = await system.api(pat.token).get(invitationsPath)
    expect(reply.status, reply.text).toBe(200)
    return reply.body as Array<any>
  }
  const listMembers = async (pat: CreatedPat = defaultPat()) => {
    const reply = await system.api(pat.token).get(membersPath)
    expect(reply.status, reply.text).toBe(200)
    return reply.body as Array<any>
  }
  const invitationOf = async (id: string, pat: CreatedPat = defaultPat()) => (await listInvitations(pat)).find((i) => i.id === id)
  return { listInvitations, listMembers, invitationOf }
}

/** The acceptance form as a browser without JavaScript posts it. */
export const postAcceptance = (link: string, password: string, confirm = password) =>
  send(link, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ password, confirm }).toString()
  })

export const getPage = (link: string) => send(link)

/** Opens the link, checks that it shows a form, and sets a password; answers the final page. */
export const acceptThroughPage = async (link: string, password = "correct horse battery staple"): Promise<Reply> => {
  const form = await getPage(link)
  if (form.status !== 200 || !/<form[^>]*method="post"/i.test(form.text)) {
    throw new Error(`the acceptance page answered ${form.status}: ${form.text.slice(0, 500)}`)
  }
  const done = await postAcceptance(link, password)
  if (done.status !== 200) throw new Error(`posting the acceptance form answered ${done.status}: ${done.text.slice(0, 500)}`)
  return done
}

/** Invites, reads the mail, accepts through the page: a member with source INVITATION. Answers the member's userSub. */
export const memberThroughInvitation = async (
  system: Harness,
  admin: CreatedPat,
  email: string,
  arbRole: Role
): Promise<string> => {
  await inviteOk(system, admin, email, arbRole)
  await acceptThroughPage(await magicLinkFor(system, email))
  const members = await system.api(admin.token).get(membersPath)
  const member = members.body?.find?.((m: any) => m.userEmail === email)
  if (member === undefined) throw new Error(`${email} is not listed after acceptance: ${members.text}`)
  return member.userSub
}

/** A member provisioned as an OIDC just-in-time login would (provisioning's admin API, operator assertion). */
export const ssoMember = async (system: Harness, tenant: CreatedTenant, userSub: string, email: string, arbRole: Role) => {
  const out = await system.adminOk("provisioning", "POST", `/admin/tenants/${tenant.slug}/sso-members`, { userSub, email, arbRole })
  return out.member
}

/** The test database itself, for what no interface can do: moving an invitation's clock into the past. */
export const withDatabase = async <A>(system: Harness, run: (client: pg.Client) => Promise<A>): Promise<A> => {
  const url = system.env["DATABASE_URL"]
  if (url === undefined) throw new Error("the system's DATABASE_URL is unknown")
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await run(client)
  } finally {
    await client.end()
  }
}

/** Moves an invitation 8 days into the past (creation and expiry together, as the table requires): it reads as EXPIRED. */
export const ageInvitation = (system: Harness, id: string) =>
  withDatabase(system, async (client) => {
    const result = await client.query(
      "UPDATE provisioning.invitations SET created_at = created_at - interval '8 days', expires_at = expires_at - interval '8 days' WHERE id = $1",
      [id]
    )
    if (result.rowCount !== 1) throw new Error(`no invitation ${id} to age`)
  })
