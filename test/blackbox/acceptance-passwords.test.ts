import { beforeAll, describe, expect, it } from "vitest"
import {
  createPatDirect,
  createTenantDirect,
  getPage,
  inviteOk,
  magicLinkFor,
  postAcceptance,
  tenantLists,
  withDatabase
} from "../support/provisioning.js"
import type { CreatedPat, CreatedTenant } from "../support/system.js"
import { useSystem } from "../support/useSystem.js"

/**
 * docs/product-rules.md#invitations-and-members: a password set on the acceptance page follows NIST
 * SP 800-63B (12 to 256 characters after NFKC, not blank, not common, not a run, not the invitation's
 * own words); and the local mailer keeps the magic link for the operator only, never in clear.
 */
const system = useSystem()

let tenant: CreatedTenant
let admin: CreatedPat

beforeAll(async () => {
  tenant = await createTenantDirect(system, "bb-passwords")
  admin = await createPatDirect(system, tenant, "write")
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
