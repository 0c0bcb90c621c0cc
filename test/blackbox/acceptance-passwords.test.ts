import { beforeAll, describe, expect, it } from "vitest"
import {
  acceptThroughPage,
  getPage,
  inviteOk,
  magicLinkFor,
  postAcceptance,
  tenantLists,
  withDatabase
} from "../support/provisioning.js"
import { consoleBrowser } from "../support/consoleBrowser.js"
import type { CreatedPat, CreatedTenant } from "../support/system.js"
import { useSharedSystem } from "../support/useSystem.js"

/**
 * docs/product-rules.md#invitations-and-members: a password set on the acceptance page follows NIST
 * SP 800-63B (12 to 256 characters after NFKC, not blank, not common, not a run, not the invitation's
 * own words); an account that has a password already keeps it, its owner typing it to accept; and
 * the local mailer keeps the magic link for the operator only, never in clear.
 */
const system = useSharedSystem()

let tenant: CreatedTenant
let admin: CreatedPat

beforeAll(async () => {
  tenant = await system.createTenant("bb-passwords")
  admin = await system.createPat(tenant, "write")
}, 120_000)

const { invitationOf, listMembers } = tenantLists(system, () => admin)

describe("the password chosen on the acceptance page", () => {
  it("is refused in plain words, the form kept and nothing changed, when NIST SP 800-63B says so; then a passphrase is taken", async () => {
    const email = "pat.doe@bb-passwords.example"
    const invitation = await inviteOk(system, admin, email, "architect")
    const link = await magicLinkFor(system, email)
    expect((await getPage(link)).text).toContain("12 to 256 characters")

    const refusals: ReadonlyArray<readonly [string, string]> = [
      [" ".repeat(12), "The password cannot be only spaces"],
      ["\u3000".repeat(12), "The password cannot be only spaces"],
      ["🔑🌍🚲🎻🍋🐙", "The password is too short: it has 6 characters and needs at least 12."],
      ["e\u0301".repeat(11), "The password is too short: it has 11 characters"],
      ["JustinBieber", "on a list of common passwords"],
      ["ｆｉｎａｌｆａｎｔａｓｙ", "on a list of common passwords"],
      ["aaaaaaaaaaaa", "only repeated or sequential characters"],
      ["abcdefghijkl", "only repeated or sequential characters"],
      ["3456789012345", "only repeated or sequential characters"],
      ["bb-passwords 2026", "mostly words from your invitation"],
      ["Pat.Doe@bb-passwords.example", "mostly words from your invitation"],
      ["Architecture Portfolio!", "mostly words from your invitation"],
      ["x".repeat(257), "The password is too long: it has 257 characters and may have at most 256."]
    ]
    for (const [password, words] of refusals) {
      const reply = await postAcceptance(link, password)
      expect({ password, status: reply.status, contentType: reply.contentType }).toEqual({
        password,
        status: 400,
        contentType: expect.stringMatching(/^text\/html/)
      })
      expect(reply.text, password).toContain(words)
      expect(reply.text, password).toMatch(/<form[^>]*method="post"/i)
      expect(reply.text, password).toContain(email)
    }
    expect(await invitationOf(invitation.id)).toEqual(invitation)
    expect((await listMembers()).map((m) => m.userEmail)).not.toContain(email)

    const done = await postAcceptance(link, "Ünïcödé façade 🦊 passphrase")
    expect(done.status, done.text).toBe(200)
    expect((await listMembers()).find((m) => m.userEmail === email)).toMatchObject({ arbRole: "architect", source: "INVITATION" })
  })
})

describe("an account that has a password, accepting an invitation to another tenant", () => {
  it("keeps its password and its console session: the page asks for the current password, a new one is refused, the old one still signs in", async () => {
    const email = "ines@bb-keep.example"
    const current = "Ines keeps her own passphrase"
    const home = await system.createTenant("bb-keep-home", email)
    await acceptThroughPage(await magicLinkFor(system, email), current)
    const browser = consoleBrowser(system.consoleUrl)
    const signedIn = await browser.signIn(email, current)
    expect({ status: signedIn.status, location: signedIn.location }, signedIn.text).toEqual({ status: 303, location: "/console/tokens" })
    expect((await browser.get("/console/tokens")).status).toBe(200)
    const session = browser.jar.get("console_session")
    expect(session).toBeDefined()

    // Invited to the file's tenant, whose admin's token invites.
    const invitation = await inviteOk(system, admin, email, "viewer")
    const link = await magicLinkFor(system, email)
    const form = await getPage(link)
    expect(form.status).toBe(200)
    expect(form.text).toContain("You already have an account: enter your password to accept.")
    expect(form.text).toContain(email)
    expect(form.text).not.toContain("Choose a password")
    // What the page once took as the account's new password is now only a wrong one.
    const replacing = await postAcceptance(link, "a brand new passphrase for ines")
    expect({ status: replacing.status, refused: replacing.text.includes("The password is not right.") }).toEqual({ status: 401, refused: true })
    expect(await invitationOf(invitation.id)).toEqual(invitation)
    const done = await postAcceptance(link, current)
    expect(done.status, done.text).toBe(200)
    expect(done.text).toContain("Your password has not changed")
    expect((await listMembers()).find((m) => m.userEmail === email)).toMatchObject({ userSub: home.adminSub, arbRole: "viewer", source: "INVITATION" })
    expect((await invitationOf(invitation.id)).status).toBe("ACCEPTED")

    // The session opened before the acceptance goes on: no password changed.
    expect((await browser.get("/console/tokens")).status).toBe(200)
    expect(browser.jar.get("console_session")).toBe(session)
    expect((await consoleBrowser(system.consoleUrl).signIn(email, "a brand new passphrase for ines")).status).toBe(401)
    // The old password signs in, now to a choice of two workspaces.
    const again = await consoleBrowser(system.consoleUrl).signIn(email, current)
    expect({ status: again.status, location: again.location }).toEqual({ status: 303, location: "/console/workspace" })
  })
})

describe("invitation mail kept without SMTP (MAIL_TRANSPORT=local)", () => {
  it("shows the link to the operator with `portfolio mail list`, yet keeps it neither readable in the database nor in any log", async () => {
    const email = "kept@bb-passwords.example"
    await inviteOk(system, admin, email, "viewer")
    const link = await magicLinkFor(system, email, "cli")
    const token = link.slice(link.lastIndexOf("/") + 1)
    const listed = await system.cli(["mail", "list", "--to", email])
    expect({ code: listed.code, link: listed.stdout.includes(link) }).toEqual({ code: 0, link: true })

    const stored = await withDatabase(system, (client) =>
      client.query<{ row: string; body: string }>(
        "SELECT row_to_json(m)::text AS row, encode(m.sealed_body, 'escape') AS body FROM provisioning.outbound_mail m WHERE lower(to_address) = $1",
        [email]
      ))
    expect(stored.rows).toHaveLength(1)
    for (const kept of [stored.rows[0]!.row, stored.rows[0]!.body]) {
      expect(kept).not.toContain(token)
      expect(kept).not.toMatch(/\/accept|Open this link/)
    }

    const logs = system.logs.join("\n")
    expect(system.logs.some((line) => line.includes("mail stored locally") && line.includes(email))).toBe(true)
    expect(logs).not.toContain(token)
    expect(logs).not.toMatch(/\/accept\/[A-Za-z0-9_-]{43}/)

    // The link the operator read is the one that works.
    expect((await postAcceptance(link, "a long enough passphrase")).status).toBe(200)
    expect(system.logs.join("\n")).not.toContain(token)
  })
})
