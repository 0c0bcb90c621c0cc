import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { alice, bob, everyone, gina, vera } from "../support/People.js"
import { browser, consoleServer } from "../support/TestServer.js"

/**
 * Every page of the console for every kind of visitor (docs/console.md): who gets it (200), who is
 * sent to sign in (303 to /console/sign-in), who gets the 403 page. A page about an object of the
 * tenant is covered by the pages' own tests (another tenant's id is a 404 there).
 */
const pages = [
  ["/console/tokens", "member"],
  ["/console/tokens/new", "member"],
  ["/console/admin/requests", "admin"],
  ["/console/admin/members", "admin"],
  ["/console/admin/partners", "admin"],
  ["/console/admin/webhooks", "admin"],
  ["/console/admin/webhooks/new", "admin"],
  ["/console/admin/security", "admin"]
] as const

const visitors = [
  ["anonymous", undefined, "none"],
  ["viewer", vera, "member"],
  ["architect", bob, "member"],
  ["tenant-admin", alice, "admin"],
  ["tenant-admin of another tenant", gina, "admin"]
] as const

const expected = (needs: "member" | "admin", has: "none" | "member" | "admin") => (has === "none" ? 303 : needs === "admin" && has !== "admin" ? 403 : 200)

layer(consoleServer(everyone()), { timeout: 30_000, excludeTestServices: true })("console authorization matrix", (it) => {
  it.effect(`answers every cell (${pages.length} pages x ${visitors.length} visitors) as the rules say`, () =>
    Effect.gen(function*() {
      const cells: Array<string> = []
      for (const [name, person, has] of visitors) {
        const b = browser()
        if (person !== undefined) expect((yield* b.signIn(person.account.email, person.password)).status).toBe(303)
        for (const [path, needs] of pages) {
          const page = yield* b.get(path)
          const want = expected(needs, has)
          if (page.status !== want || (want === 303 && page.location !== "/console/sign-in")) cells.push(`${name} GET ${path}: ${page.status} ${page.location ?? ""}, expected ${want}`)
        }
      }
      expect(cells).toEqual([])
    }))
})
