import { describe, expect, it as plain, layer } from "@effect/vitest"
import { Effect, Result, Option, Redacted } from "effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseBreakGlass, parseClientSecret, parseDomains, parseRoleMap } from "../src/SsoInput.js"
import { FakeAdmin, FakeAdminLive, ssoRedirectUri, tenantIdOf } from "./support/FakeAdminApis.js"
import { portfolio, problem, TestOperator } from "./support/RunCli.js"

const Secret = "oidc-client-secret-7f3a9c1e5b"
const at = "2026-07-01T10:00:00.000Z"
const roles = "the roles are tenant-admin, architect, portfolio-manager, contributor, viewer, arb-member"

/** Writes `text` to a file of a fresh directory, runs `use` with its path, then removes it. */
const withFile = <A, E, R>(text: string, use: (path: string) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "portfolio-sso-"))),
    (dir) => {
      const path = join(dir, "client-secret")
      writeFileSync(path, text)
      return use(path)
    },
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true }))
  )

/** The requests the fake provisioning received at its sso endpoints during `run`, and every signed call. */
const callsDuring = <A, E, R>(run: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const { state } = yield* FakeAdmin
    const [requests, callers] = [state.ssoRequests.length, state.callers.length]
    const result = yield* run
    return { result, requests: state.ssoRequests.slice(requests), callers: state.callers.slice(callers) }
  })

const set = (tenant: string, file: string, extra: ReadonlyArray<string>, stdin?: string) =>
  portfolio(
    ["sso", "set", "--tenant", tenant, "--issuer", "https://login.acme.example", "--client-id", "portfolio", "--client-secret-file", file, ...extra],
    stdin
  )

const left = <A>(either: Result.Result<A, string>) => Option.getOrUndefined(Result.getFailure(either))

layer(FakeAdminLive)("portfolio sso against provisioning's admin API", (it) => {
  it.effect("set PUTs the whole connection, the secret read from its file and sent, the role map parsed; --json prints the answer", () =>
    Effect.gen(function*() {
      yield* portfolio(["tenant", "create", "acme", "--admin-email", "admin@acme.example"])
      const { callers, requests, result } = yield* withFile(`${Secret}\n`, (file) =>
        callsDuring(set("acme", file, [
          "--domains", "Acme.example, acme.test",
          "--default-role", "contributor",
          "--role-claim", "groups",
          "--role-map", "arb-admins=tenant-admin, cn=architects=architect",
          "--required",
          "--break-glass", "root@acme.example,ops@acme.example",
          "--json"
        ])))
      expect(result.stderr).toBe("")
      expect(result.code).toBe(0)
      expect(callers).toEqual([`${TestOperator}/operator/admin`])
      expect(requests.map(({ method, url }) => `${method} ${url}`)).toEqual(["PUT /admin/tenants/acme/sso"])
      const payload = requests[0]!.payload!
      // The trailing line break of the file is not part of the secret.
      expect(Redacted.value(payload.clientSecret)).toBe(Secret)
      expect({ ...payload, clientSecret: undefined, roleMap: payload.roleMap.map((m) => ({ ...m })) }).toEqual({
        issuer: "https://login.acme.example",
        clientId: "portfolio",
        clientSecret: undefined,
        domains: ["acme.example", "acme.test"],
        defaultRole: "contributor",
        roleClaim: "groups",
        roleMap: [{ value: "arb-admins", role: "tenant-admin" }, { value: "cn=architects", role: "architect" }],
        required: true,
        breakGlass: ["root@acme.example", "ops@acme.example"],
        emailVerifiedClaim: "email_verified"
      })
      expect(JSON.parse(result.stdout)).toEqual({
        tenantId: yield* tenantIdOf("acme"),
        issuer: "https://login.acme.example",
        clientId: "portfolio",
        redirectUri: ssoRedirectUri("acme"),
        domains: ["acme.example", "acme.test"],
        defaultRole: "contributor",
        roleClaim: "groups",
        roleMap: [{ value: "arb-admins", role: "tenant-admin" }, { value: "cn=architects", role: "architect" }],
        required: true,
        breakGlass: ["root@acme.example", "ops@acme.example"],
        emailVerifiedClaim: "email_verified",
        domainsConfirmed: true,
        secretSetAt: at,
        updatedAt: at
      })
      expect(result.stdout).not.toContain(Secret)
    }))

  it.effect("set for a person prints the redirect URI to register first, and the defaults of what was not given", () =>
    Effect.gen(function*() {
      yield* portfolio(["tenant", "create", "beta", "--admin-email", "admin@beta.example"])
      const { requests, result } = yield* withFile(Secret, (file) => callsDuring(set("beta", file, ["--domains", "beta.example"])))
      expect(result.code).toBe(0)
      expect(result.stdout.split("\n")).toEqual([
        "Single sign-on of beta set: its people sign in through https://login.acme.example.",
        "Redirect URI, to register at the provider for client portfolio:",
        "",
        `  ${ssoRedirectUri("beta")}`,
        "",
        "  issuer:        https://login.acme.example",
        "  client id:     portfolio",
        `  client secret: set ${at}, never shown`,
        "  domains:       beta.example",
        "  default role:  viewer",
        "  role claim:    (none): everyone signs in as viewer",
        "  required:      no: people of these domains may also sign in with a password",
        "  break-glass:   (none)",
        "  e-mail verified by: email_verified",
        "  domains confirmed: yes: a work e-mail of them finds this workspace at sign-in",
        `  tenant id:     ${yield* tenantIdOf("beta")}`,
        `  updated:       ${at}`
      ])
      expect(result.stdout).not.toContain(Secret)
      const payload = requests[0]!.payload!
      expect([payload.defaultRole, payload.roleClaim, payload.roleMap, payload.required, payload.breakGlass]).toEqual(["viewer", null, [], false, []])
    }))

  it.effect("set reads the secret from stdin with -", () =>
    Effect.gen(function*() {
      yield* portfolio(["tenant", "create", "gamma", "--admin-email", "admin@gamma.example"])
      const { requests, result } = yield* callsDuring(set("gamma", "-", ["--domains", "gamma.example", "--json"], `${Secret}\r\n`))
      expect([result.code, result.stderr]).toEqual([0, ""])
      expect(Redacted.value(requests[0]!.payload!.clientSecret)).toBe(Secret)
    }))

  it.effect("set refuses a secret file that is missing, empty or of several lines, exit 1, without quoting it or calling", () =>
    Effect.gen(function*() {
      const refused = (text: string | undefined, detail: (file: string) => string) =>
        Effect.gen(function*() {
          const run = (file: string) => Effect.map(callsDuring(set("acme", file, ["--domains", "acme.example", "--json"])), (calls) => ({ ...calls, file }))
          const { callers, file, result } = yield* text === undefined ? run("/nonexistent/client-secret") : withFile(text, run)
          expect([result.code, result.stdout, callers]).toEqual([1, "", []])
          const printed = JSON.parse(result.stderr)
          expect(printed).toMatchObject({ errorCode: "INVALID_REQUEST", status: 400 })
          expect(printed.detail).toContain(detail(file))
          expect(result.stderr).not.toContain(Secret)
        })
      yield* refused("\n", (file) => `${file} holds no client secret: it is empty.`)
      yield* refused(`{\n  "client_secret": "${Secret}"\n}\n`, (file) => `${file} holds several lines; a client secret is a single line.`)
      yield* refused(undefined, () => "Cannot read /nonexistent/client-secret: ")
      yield* refused("x".repeat(1025), (file) => `${file} holds 1025 characters; a client secret is at most 1024.`)
    }))

  it.effect("a role map without its claim, an unknown role, no domain or a bad one are usage errors (exit 2), explained, before any call", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
        [["--domains", "acme.example", "--role-map", "admins=tenant-admin"], "--role-map needs --role-claim: the name of the ID token's claim whose values it maps"],
        [["--domains", "acme.example", "--role-claim", "groups", "--role-map", "admins=admin"], `Unknown role 'admin' in 'admins=admin': ${roles}.`],
        [["--domains", "acme.example", "--role-claim", "groups", "--role-map", "admins"], "'admins' is not value=role"],
        [["--domains", "acme.example", "--role-claim", "groups", "--role-map", "a=viewer,a=architect"], "'a' is mapped twice, to viewer and to architect: keep one."],
        [["--domains", "acme.example", "--role-claim", "two words"], "'two words' is not a claim name"],
        [[], "--domains is required: the e-mail domains (comma-separated, such as example.com,example.org) whose people sign in with this provider; at least one."],
        [["--domains", ","], "No domain given: write at least one e-mail domain, such as example.com."],
        [["--domains", "acme.example,localhost,@x.example"], "Not an e-mail domain: 'localhost', '@x.example'"],
        [["--domains", "acme.example", "--default-role", "owner"], `Expected one of the following cases: ${roles.slice("the roles are ".length)}`],
        [["--domains", "acme.example", "--break-glass", "root@acme.example,root"], "Not an e-mail: 'root'."]
      ]
      for (const [extra, message] of cases) {
        const { callers, result } = yield* withFile(Secret, (file) => callsDuring(set("acme", file, extra)))
        expect([extra, result.code, result.stdout, callers]).toEqual([extra, 2, "", []])
        expect(result.stderr).toContain(message)
        expect(result.stderr).not.toContain(Secret)
      }
    }))

  it.effect("show prints the connection, the redirect URI first and the secret never; --json prints the answer", () =>
    Effect.gen(function*() {
      yield* portfolio(["tenant", "create", "delta", "--admin-email", "admin@delta.example"])
      yield* withFile(Secret, (file) =>
        set("delta", file, [
          "--domains", "delta.example,delta.test",
          "--role-claim", "groups",
          "--role-map", "arb-admins=tenant-admin,architects=architect",
          "--required",
          "--break-glass", "root@delta.example"
        ]))
      const { requests, result } = yield* callsDuring(portfolio(["sso", "show", "--tenant", "delta"]))
      expect(requests.map(({ method, url }) => `${method} ${url}`)).toEqual(["GET /admin/tenants/delta/sso"])
      expect(result.stdout.split("\n")).toEqual([
        "Single sign-on of delta, through https://login.acme.example.",
        "Redirect URI, to register at the provider for client portfolio:",
        "",
        `  ${ssoRedirectUri("delta")}`,
        "",
        "  issuer:        https://login.acme.example",
        "  client id:     portfolio",
        `  client secret: set ${at}, never shown`,
        "  domains:       delta.example, delta.test",
        "  default role:  viewer (when no mapping matches)",
        "  role claim:    groups",
        "  role map:      arb-admins -> tenant-admin",
        "                 architects -> architect",
        "  required:      yes: people of these domains sign in only through the provider, the break-glass accounts excepted",
        "  break-glass:   root@delta.example",
        "  e-mail verified by: email_verified",
        "  domains confirmed: yes: a work e-mail of them finds this workspace at sign-in",
        `  tenant id:     ${yield* tenantIdOf("delta")}`,
        `  updated:       ${at}`
      ])
      const json = yield* portfolio(["sso", "show", "--tenant", "delta", "--json"])
      expect(JSON.parse(json.stdout)).toMatchObject({
        redirectUri: ssoRedirectUri("delta"),
        roleMap: [{ value: "arb-admins", role: "tenant-admin" }, { value: "architects", role: "architect" }],
        secretSetAt: at
      })
      expect(Object.keys(JSON.parse(json.stdout))).not.toContain("clientSecret")
      expect(result.stdout + json.stdout).not.toContain(Secret)
    }))

  it.effect("disable DELETEs the connection and says passwords are back; afterwards show and disable exit 1 with the 404", () =>
    Effect.gen(function*() {
      yield* portfolio(["tenant", "create", "eps", "--admin-email", "admin@eps.example"])
      yield* withFile(Secret, (file) => set("eps", file, ["--domains", "eps.example"]))
      const { requests, result } = yield* callsDuring(portfolio(["sso", "disable", "--tenant", "eps", "--json"]))
      expect(requests.map(({ method, url }) => `${method} ${url}`)).toEqual(["DELETE /admin/tenants/eps/sso"])
      expect([result.code, JSON.parse(result.stdout)]).toEqual([0, { tenant: "eps", disabled: true }])
      const noConnection = problem("NOT_FOUND", "not-found", "Not found", 404, "Tenant 'eps' has no single sign-on connection.")
      for (const command of ["show", "disable"]) {
        const missing = yield* portfolio(["sso", command, "--tenant", "eps", "--json"])
        expect([command, missing.code, missing.stdout, JSON.parse(missing.stderr)]).toEqual([command, 1, "", noConnection])
      }
      yield* withFile(Secret, (file) => set("eps", file, ["--domains", "eps.example"]))
      const human = yield* portfolio(["sso", "disable", "--tenant", "eps"])
      expect(human.stdout).toBe(
        "Single sign-on of eps disabled: its connection and client secret are deleted; its people sign in with passwords again."
      )
    }))

  it.effect("an unknown tenant exits 1 with provisioning's 404, for set as for show", () =>
    Effect.gen(function*() {
      const noTenant = problem("NOT_FOUND", "not-found", "Not found", 404, "No tenant 'nobody'.")
      const setRun = yield* withFile(Secret, (file) => set("nobody", file, ["--domains", "nobody.example", "--json"]))
      expect([setRun.code, setRun.stdout, JSON.parse(setRun.stderr)]).toEqual([1, "", noTenant])
      expect(setRun.stderr).not.toContain(Secret)
      const show = yield* portfolio(["sso", "show", "--tenant", "nobody"])
      expect([show.code, JSON.parse(show.stderr)]).toEqual([1, noTenant])
    }))
})

describe("sso flags", () => {
  plain("domains are lowercased, trimmed, kept in order once each; at most 50", () => {
    expect(parseDomains(" Example.COM,example.org,example.com,")).toEqual(Result.succeed(["example.com", "example.org"]))
    const many = Array.from({ length: 51 }, (_, i) => `d${i}.example`).join(",")
    expect(left(parseDomains(many))).toBe("51 domains given; a connection has at most 50.")
  })

  plain("a role map item is split at its last =, a value mapped twice to one role counts once", () => {
    expect(parseRoleMap("cn=admins=tenant-admin , viewers = viewer,viewers=viewer")).toEqual(
      Result.succeed([{ value: "cn=admins", role: "tenant-admin" }, { value: "viewers", role: "viewer" }])
    )
    expect(left(parseRoleMap("=viewer"))).toBe(`'=viewer' is not value=role: write the claim's value, =, and a role (${roles}).`)
    expect(left(parseRoleMap(""))).toBe(`No mapping given: write value=role, comma-separated (${roles}).`)
  })

  plain("break-glass e-mails are kept once each whatever their case", () => {
    expect(parseBreakGlass("Root@acme.example,root@ACME.example,ops@acme.example")).toEqual(Result.succeed(["Root@acme.example", "ops@acme.example"]))
  })

  plain("a secret loses the line breaks at its end only, and a refusal never quotes it", () => {
    expect(parseClientSecret("  spaced secret \n\n", "f")).toEqual(Result.succeed("  spaced secret "))
    expect(left(parseClientSecret(`${Secret}\u0000`, "f"))).toBe("f holds a NUL character; a client secret is text.")
  })
})
