import { beforeAll, expect, it } from "vitest"
import { consoleBrowser } from "../support/consoleBrowser.js"
import { acceptThroughPage, magicLinkFor } from "../support/provisioning.js"
import type { CreatedTenant } from "../support/system.js"
import { useSharedSystem } from "../support/useSystem.js"

/**
 * The console's forms that name a member, a partner client or a subscription in their path, posted
 * by a signed-in tenant-admin with a valid CSRF token but an id that is none (docs/console.md): the
 * 404 page, never a 500 or the outage page, and nothing changed.
 */
const system = useSharedSystem()
let tenant: CreatedTenant
const email = "admin@bb-path-ids.example"
const password = "the admin's own long passphrase"

beforeAll(async () => {
  tenant = await system.createTenant("bb-path-ids", email)
  await acceptThroughPage(await magicLinkFor(system, email), password)
}, 120_000)

it("answers 404 to an id with ?, #, tabs, dots or a NUL (400 to an encoded slash), and changes nothing", async () => {
  const browser = consoleBrowser(system.consoleUrl)
  const signedIn = await browser.signIn(email, password)
  expect(signedIn.status, signedIn.text).toBe(303)
  const page = await browser.get("/console/admin/members")
  expect(page.status).toBe(200)
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)?.[1]
  expect(csrf).toBeDefined()
  // Well-formed paths whose id is none: 404. An encoded slash makes the path ambiguous, refused
  // on every port before routing (docs/product-rules.md, "Request paths"): 400.
  const ids: ReadonlyArray<readonly [string, number]> = [
    [`${encodeURIComponent(tenant.adminSub)}%3Fx=1`, 404],
    [`${encodeURIComponent(tenant.adminSub)}%23x`, 404],
    [".%09.", 404],
    ["%09", 404],
    ["a%00b", 404],
    ["..%2F..%2Fadmin", 400]
  ]
  const answers = []
  const expected = []
  for (const [id, status] of ids) {
    for (const path of [`/console/admin/members/${id}/remove`, `/console/admin/partners/${id}/disable`, `/console/admin/webhooks/${id}/disable`]) {
      const answer = await browser.post(path, { csrf: csrf! })
      answers.push({ path, status: answer.status })
      expected.push({ path, status })
    }
  }
  expect(answers).toEqual(expected)
  // Nothing was removed: the admin still signs in and sees the members page.
  expect((await browser.get("/console/admin/members")).status).toBe(200)
  const members = await system.adminOk("provisioning", "GET", `/admin/memberships/${tenant.id}/${encodeURIComponent(tenant.adminSub)}`)
  expect(members).toMatchObject({ userSub: tenant.adminSub, arbRole: "tenant-admin" })
})
