import { expect, layer } from "@effect/vitest"
import { CallerIdentity } from "@portfolio/domain"
import { AssertionHeader, signAssertion } from "@portfolio/platform/security"
import { Effect, Ref } from "effect"
import { randomBytes } from "node:crypto"
import { type Person, MemoryWorld } from "../support/Memory.js"
import { alice, bob, dora, everyone, gina, rita, vera } from "../support/People.js"
import { browser, consoleServer, csrfOf } from "../support/TestServer.js"

/**
 * Every page and every form of the console for every kind of visitor (docs/console.md): who gets it,
 * who is sent to sign in (303 to /console/sign-in), who gets the 403 page. The console knows people
 * by their session cookie only: a partner's bearer token or an operator's assertion, signed with the
 * secret the console holds for the very method and path, which open the API and the admin ports,
 * open no page here. An object of another tenant is a 404 (the
 * pages' own tests); the ids below are of no object, so that an admin's form is answered without
 * changing anything.
 */
const pages = [
  ["/console/tokens", "member"],
  ["/console/tokens/new", "member"],
  ["/console/workspace", "member"],
  ["/console/admin/requests", "admin"],
  ["/console/admin/members", "admin"],
  ["/console/admin/partners", "admin"],
  ["/console/admin/scim", "admin"],
  ["/console/admin/sso", "admin"],
  ["/console/admin/webhooks", "admin"],
  ["/console/admin/webhooks/new", "admin"],
  ["/console/admin/webhooks/00000000-0000-4000-8000-000000000000", "admin"],
  ["/console/admin/webhooks/00000000-0000-4000-8000-000000000000/deliveries/00000000-0000-4000-8000-000000000001", "admin"],
  ["/console/admin/security", "admin"]
] as const

const none = "00000000-0000-4000-8000-000000000000"
const world = Effect.flatMap(MemoryWorld, Ref.get)
const forms = [
  ["/console/tokens/new", "member"],
  [`/console/tokens/${none}/revoke`, "member"],
  [`/console/admin/requests/${none}/approve`, "admin"],
  [`/console/admin/requests/${none}/deny`, "admin"],
  ["/console/admin/members/invite", "admin"],
  ["/console/admin/members/sub-nobody/remove", "admin"],
  [`/console/admin/invitations/${none}/revoke`, "admin"],
  ["/console/admin/partners/new", "admin"],
  ["/console/admin/partners/service-partner-nobody/rotate-secret", "admin"],
  ["/console/admin/partners/service-partner-nobody/disable", "admin"],
  ["/console/admin/partners/service-partner-nobody/enable", "admin"],
  ["/console/admin/scim/new", "admin"],
  [`/console/admin/scim/${none}/revoke`, "admin"],
  ["/console/admin/sso", "admin"],
  ["/console/admin/sso/disable", "admin"],
  ["/console/admin/webhooks/new", "admin"],
  [`/console/admin/webhooks/${none}`, "admin"],
  [`/console/admin/webhooks/${none}/enable`, "admin"],
  [`/console/admin/webhooks/${none}/disable`, "admin"],
  [`/console/admin/webhooks/${none}/rotate-secret`, "admin"],
  [`/console/admin/webhooks/${none}/recover`, "admin"],
  [`/console/admin/webhooks/${none}/deliveries/${none}/redeliver`, "admin"]
] as const

/** The secret the test console is given: an operator's assertion signed with it is as good as one can be. */
const secret = randomBytes(32).toString("hex")
const operator = new CallerIdentity({ tenantId: "00000000-0000-0000-0000-000000000000", subject: "operator:root", role: "operator", scope: "admin" })
/** A fresh assertion for each request, bound to its method and path as the services check them. */
const operatorHeaders = (method: string, path: string) => ({ [AssertionHeader]: signAssertion(secret, operator, { audience: "console", method, target: path }) })

type Headers = (method: string, path: string) => Record<string, string>
/** What provisioning's record of the visitor becomes once they are signed in: the console reads it again on every page. */
type Afterwards = (person: Person) => void
const removed: Afterwards = (person) => void ((person.account as { memberships: unknown }).memberships = [])
const demotedToViewer: Afterwards = (person) =>
  void ((person.account as { memberships: unknown }).memberships = person.account.memberships.map((m) => ({ ...m, role: "viewer" })))
const visitors: ReadonlyArray<readonly [string, Person | undefined, Headers, "none" | "member" | "admin", Afterwards?]> = [
  ["anonymous", undefined, () => ({}), "none"],
  ["a partner's bearer token", undefined, () => ({ authorization: "Bearer eyJhbGciOiJFUzI1NiIsImtpZCI6ImsxIn0.eyJzdWIiOiJzZXJ2aWNlLXBhcnRuZXItZXJwIn0.c2ln" }), "none"],
  ["an operator's assertion", undefined, operatorHeaders, "none"],
  ["viewer", vera, () => ({}), "member"],
  ["architect", bob, () => ({}), "member"],
  ["tenant-admin", alice, () => ({}), "admin"],
  ["tenant-admin of another tenant", gina, () => ({}), "admin"],
  // Signed in, then removed from their only tenant: their session is nobody's any more.
  ["tenant-admin removed after signing in", rita, () => ({}), "none", removed],
  // Signed in as a tenant-admin, then removed and invited back as a viewer: a viewer from the next page on.
  ["tenant-admin demoted to viewer after signing in", dora, () => ({}), "member", demotedToViewer]
]

type Has = "none" | "member" | "admin"
const refusal = (needs: "member" | "admin", has: Has) => (has === "none" ? 303 : needs === "admin" && has !== "admin" ? 403 : undefined)

layer(consoleServer([...everyone(), rita, dora], {}, secret), { timeout: 60_000, excludeTestServices: true })("console authorization matrix", (it) => {
  it.effect(`answers every page (${pages.length} x ${visitors.length} visitors) and every form (${forms.length} x ${visitors.length}) as the rules say`, () =>
    Effect.gen(function*() {
      const cells: Array<string> = []
      const people = (yield* world).people
      for (const [name, person, headersFor, has, afterwards] of visitors) {
        // A browser per request for the visitors whose headers depend on it; the same one otherwise, for its session.
        const signedIn = browser()
        const b = (method: string, path: string) => (person === undefined ? browser("http://console.test", headersFor(method, path)) : signedIn)
        if (person !== undefined) expect((yield* signedIn.signIn(person.account.email, person.password)).status).toBe(303)
        if (person !== undefined && afterwards !== undefined) afterwards(people.find((p) => p.account.subject === person.account.subject)!)
        // A form of the visitor's own session, so that the CSRF check is passed and the rule itself answers.
        const csrf = has === "none" ? "" : csrfOf(yield* signedIn.get("/console/tokens/new"))
        if (has !== "none") expect(csrf, name).not.toBe("")
        const check = (method: string, path: string, status: number, location: string | undefined, needs: "member" | "admin") => {
          const want = refusal(needs, has)
          const cell = `${name} ${method} ${path}: ${status} ${location ?? ""}`
          if (want === 303 && (status !== 303 || location !== "/console/sign-in")) cells.push(`${cell}, expected 303 to /console/sign-in`)
          else if (want === 403 && status !== 403) cells.push(`${cell}, expected 403`)
          // Allowed: answered by the page itself (a page, a redirect after the form, a 404 or a 400 for what does not exist), never a refusal.
          else if (want === undefined && (status === 403 || status >= 500 || (status === 303 && location === "/console/sign-in"))) cells.push(`${cell}, expected the page's own answer`)
        }
        for (const [path, needs] of pages) {
          const page = yield* b("GET", path).get(path)
          // A GET of an object of no one is the page's 404.
          check("GET", path, page.status, page.location, needs)
          if (refusal(needs, has) === undefined && !path.includes(none) && page.status !== 200) cells.push(`${name} GET ${path}: ${page.status}, expected 200`)
        }
        for (const [path, needs] of forms) {
          const answer = yield* b("POST", path).post(path, { csrf })
          check("POST", path, answer.status, answer.location, needs)
        }
      }
      expect(cells).toEqual([])
    }))
})
