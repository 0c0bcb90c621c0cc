import { expect, layer } from "@effect/vitest"
import { WebhookSubscription } from "@portfolio/domain"
import { Effect, Layer } from "effect"
import { FakeAdminLive, FixedTime, tenantIdOf } from "./support/FakeAdminApis.js"
import { FakeWebhookAdmin, FakeWebhookAdminLive, subscriptionId, webhookSecret } from "./support/FakeWebhookAdminApi.js"
import { controlCharactersIn, portfolio, problem, TestOperator } from "./support/RunCli.js"

const Fakes = Layer.merge(FakeAdminLive, FakeWebhookAdminLive)

/** The calls the dispatcher's fake received during `run`. */
const callsDuring = <A, E, R>(run: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const { state } = yield* FakeWebhookAdmin
    const before = state.calls.length
    const result = yield* run
    return { result, calls: state.calls.slice(before) }
  })

const at = "2026-07-01T10:00:00.000Z"

layer(Fakes)("portfolio webhook: subscriptions", (it) => {
  it.effect("create --json resolves the tenant, sends the URL, events and description, and prints the record with its secret", () =>
    Effect.gen(function*() {
      yield* portfolio(["tenant", "create", "acme", "--admin-email", "admin@acme.example"])
      const tenantId = yield* tenantIdOf("acme")
      const { calls, result } = yield* callsDuring(portfolio([
        "webhook", "create", "--tenant", "acme", "--url", "https://hooks.acme.example/in",
        "--events", "das.submitted,application.created", "--description", "CI pipeline", "--json"
      ]))
      expect(result.stderr).toBe("")
      expect(result.code).toBe(0)
      expect(JSON.parse(result.stdout)).toEqual({
        id: subscriptionId(1),
        tenantId,
        url: "https://hooks.acme.example/in",
        description: "CI pipeline",
        events: ["das.submitted", "application.created"],
        allEvents: false,
        state: "enabled",
        disabledReason: null,
        consecutiveFailures: 0,
        previousSecretExpiresAt: null,
        createdAt: at,
        updatedAt: at,
        secret: webhookSecret(1)
      })
      expect(calls).toEqual([
        `POST /admin/tenants/${tenantId}/webhooks {"url":"https://hooks.acme.example/in","events":["das.submitted","application.created"],"description":"CI pipeline"}`
      ])
      const { state } = yield* FakeWebhookAdmin
      expect(state.callers.at(-1)).toBe(`${TestOperator}/operator/admin`)
    }))

  it.effect("create without --events subscribes to every kind; the lines say to store the secret now", () =>
    Effect.gen(function*() {
      const tenantId = yield* tenantIdOf("acme")
      const { calls, result } = yield* callsDuring(portfolio(["webhook", "create", "--tenant", "acme", "--url", "https://hooks.acme.example/all"]))
      expect(result.code).toBe(0)
      expect(calls).toEqual([`POST /admin/tenants/${tenantId}/webhooks {"url":"https://hooks.acme.example/all","description":""}`])
      expect(result.stdout.split("\n")).toEqual([
        `Webhook ${subscriptionId(2)} created in acme.`,
        "  url:          https://hooks.acme.example/all",
        "  events:       all (kinds added later included)",
        "  state:        enabled",
        "  failures:     0 in a row",
        `  tenant id:    ${tenantId}`,
        `  updated:      ${at}`,
        "",
        `  ${webhookSecret(2)}`,
        "",
        "This signing secret is shown this once; store it now."
      ])
    }))

  it.effect("list prints the tenant's subscriptions in both forms, and says when there is none", () =>
    Effect.gen(function*() {
      const listed = yield* portfolio(["webhook", "list", "--tenant", "acme", "--json"])
      expect(listed.code).toBe(0)
      const json = JSON.parse(listed.stdout)
      expect(json.map((s: { id: string }) => s.id)).toEqual([subscriptionId(1), subscriptionId(2)])
      expect(json[0]).not.toHaveProperty("secret")
      expect(json[0]).toMatchObject({ url: "https://hooks.acme.example/in", events: ["das.submitted", "application.created"], state: "enabled", consecutiveFailures: 0 })
      const human = yield* portfolio(["webhook", "list", "--tenant", "acme"])
      expect(human.stdout.split("\n")).toEqual([
        `${subscriptionId(1)}  enabled   https://hooks.acme.example/in  events: das.submitted, application.created  failures: 0`,
        `${subscriptionId(2)}  enabled   https://hooks.acme.example/all  events: all (kinds added later included)  failures: 0`
      ])
      yield* portfolio(["tenant", "create", "quiet", "--admin-email", "admin@quiet.example"])
      expect((yield* portfolio(["webhook", "list", "--tenant", "quiet"])).stdout).toBe("No webhook in quiet.")
    }))

  it.effect("an unknown tenant exits 1 with provisioning's 404, before the dispatcher is called", () =>
    Effect.gen(function*() {
      const { calls, result } = yield* callsDuring(portfolio(["webhook", "list", "--tenant", "nobody", "--json"]))
      expect(result.code).toBe(1)
      expect(JSON.parse(result.stderr)).toEqual(problem("NOT_FOUND", "not-found", "Not found", 404, "No tenant 'nobody'."))
      expect(calls).toEqual([])
    }))

  it.effect("show prints one subscription; an unknown id exits 1 with the dispatcher's 404 and nothing on stdout", () =>
    Effect.gen(function*() {
      const shown = yield* portfolio(["webhook", "show", subscriptionId(1), "--json"])
      expect(JSON.parse(shown.stdout)).toMatchObject({ id: subscriptionId(1), description: "CI pipeline" })
      const unknown = "55555555-0000-4000-8000-999999999999"
      for (const command of ["show", "delete", "enable", "disable", "rotate-secret"]) {
        const run = yield* portfolio(["webhook", command, unknown, "--json"])
        expect([command, run.code, run.stdout]).toEqual([command, 1, ""])
        expect(JSON.parse(run.stderr)).toEqual(
          problem("NOT_FOUND", "not-found", "Not found", 404, `Webhook subscription '${unknown}' does not exist.`)
        )
      }
    }))

  it.effect("update sends only what is given; with nothing to change it exits 1 before any call", () =>
    Effect.gen(function*() {
      const id = subscriptionId(2)
      const { calls, result } = yield* callsDuring(portfolio(["webhook", "update", id, "--events", "application.updated", "--json"]))
      expect(calls).toEqual([`PATCH /admin/webhooks/${id} {"events":["application.updated"]}`])
      expect(JSON.parse(result.stdout)).toMatchObject({ id, url: "https://hooks.acme.example/all", events: ["application.updated"], allEvents: false })
      const human = yield* portfolio(["webhook", "update", id, "--url", "https://hooks.acme.example/v2", "--description", "moved"])
      expect(human.stdout.split("\n").slice(0, 2)).toEqual([`Webhook ${id} updated.`, "  url:          https://hooks.acme.example/v2"])
      expect(human.stdout).toContain("  description:  moved")
      const nothing = yield* callsDuring(portfolio(["webhook", "update", id]))
      expect(nothing.result.code).toBe(1)
      expect(JSON.parse(nothing.result.stderr)).toMatchObject({
        errorCode: "INVALID_REQUEST",
        detail: "Nothing to update: give --url, --events or --description."
      })
      expect(nothing.calls).toEqual([])
    }))

  it.effect("disable and enable switch the state, in both forms", () =>
    Effect.gen(function*() {
      const id = subscriptionId(1)
      const disabled = yield* portfolio(["webhook", "disable", id, "--json"])
      expect(JSON.parse(disabled.stdout)).toMatchObject({ id, state: "disabled", disabledReason: "manual" })
      const shown = yield* portfolio(["webhook", "show", id])
      expect(shown.stdout.split("\n")).toContain("  state:        disabled (manual)")
      const enabled = yield* portfolio(["webhook", "enable", id])
      expect(enabled.stdout.split("\n").slice(0, 1)).toEqual([`Webhook ${id} enabled.`])
      expect(enabled.stdout.split("\n")).toContain("  state:        enabled")
    }))

  it.effect("rotate-secret sends the grace in seconds, 24h by default, and prints the new secret once", () =>
    Effect.gen(function*() {
      const id = subscriptionId(1)
      const byDefault = yield* callsDuring(portfolio(["webhook", "rotate-secret", id, "--json"]))
      expect(byDefault.calls).toEqual([`POST /admin/webhooks/${id}/rotate-secret {"graceSeconds":86400}`])
      expect(JSON.parse(byDefault.result.stdout)).toMatchObject({ id, secret: webhookSecret(3), previousSecretExpiresAt: "2026-07-02T10:00:00.000Z" })
      const short = yield* callsDuring(portfolio(["webhook", "rotate-secret", id, "--grace", "15m"]))
      expect(short.calls).toEqual([`POST /admin/webhooks/${id}/rotate-secret {"graceSeconds":900}`])
      expect(short.result.stdout.split("\n")).toEqual([
        `Signing secret of webhook ${id} rotated.`,
        "Until 2026-07-01T10:15:00.000Z deliveries also carry a signature made with the previous secret.",
        "",
        `  ${webhookSecret(4)}`,
        "",
        "This signing secret is shown this once; store it now."
      ])
      const none = yield* portfolio(["webhook", "rotate-secret", id, "--grace", "0"])
      expect(none.stdout.split("\n")[1]).toBe("The previous secret no longer signs.")
    }))

  it.effect("a grace, events, URL or id that cannot be right is a usage error (exit 2), explained, before any call", () =>
    Effect.gen(function*() {
      const id = subscriptionId(1)
      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
        [["webhook", "rotate-secret", id, "--grace", "2weeks"], "'2weeks' is not a duration: write a whole number and a unit, ms, s, m, h or d"],
        [["webhook", "rotate-secret", id, "--grace", "8d"], "'8d' is longer than the grace allowed, 7d (604800 seconds)."],
        [
          ["webhook", "create", "--tenant", "acme", "--url", "https://h.example", "--events", "das.submitted,app.deleted"],
          "Unknown event kind 'app.deleted': the kinds are application.created, application.updated, das.submitted."
        ],
        [["webhook", "update", id, "--events", ""], "No event kind given: the kinds are application.created, application.updated, das.submitted."],
        [["webhook", "create", "--tenant", "acme", "--url", "not a url"], "must be an absolute URL"],
        [["webhook", "show", "not-a-uuid"], "not-a-uuid"]
      ]
      for (const [args, message] of cases) {
        const { calls, result } = yield* callsDuring(portfolio(args))
        expect([args, result.code, calls]).toEqual([args, 2, []])
        expect(result.stderr).toContain(message)
      }
    }))

  it.effect("delete removes the subscription and says so", () =>
    Effect.gen(function*() {
      const id = subscriptionId(2)
      const { calls, result } = yield* callsDuring(portfolio(["webhook", "delete", id, "--json"]))
      expect(calls).toEqual([`DELETE /admin/webhooks/${id}`])
      expect([result.code, JSON.parse(result.stdout)]).toEqual([0, { id, deleted: true }])
      expect((yield* portfolio(["webhook", "delete", id])).code).toBe(1)
      expect((yield* portfolio(["webhook", "delete", subscriptionId(1)])).stdout).toBe(`Webhook ${subscriptionId(1)} deleted.`)
    }))

  it.effect("show prints a stored description's control characters as escapes, and --json keeps it exact", () =>
    Effect.gen(function*() {
      const { state } = yield* FakeWebhookAdmin
      const id = subscriptionId(9)
      // Kept before the contract refused control characters: a line break, a line that passes for
      // the state, a terminal title, and a right-to-left override.
      const description = "CI\n  state:        enabled\u001b]0;pwned\u0007 \u202egnp.exe\\"
      state.subscriptions.set(id, new WebhookSubscription({
        id, tenantId: yield* tenantIdOf("acme"), url: "https://hooks.acme.example/in", description, events: ["das.submitted"], allEvents: false,
        state: "disabled", disabledReason: "manual", consecutiveFailures: 0, previousSecretExpiresAt: null, createdAt: FixedTime, updatedAt: FixedTime
      }))
      const shown = yield* portfolio(["webhook", "show", id])
      expect(shown.code).toBe(0)
      expect(shown.stdout.split("\n")).toContain("  description:  CI\\n  state:        enabled\\x1b]0;pwned\\x07 \\u202egnp.exe\\\\")
      expect(shown.stdout.split("\n").filter((line) => line.startsWith("  state:"))).toEqual(["  state:        disabled (manual)"])
      expect(controlCharactersIn(shown.stdout)).toEqual([])
      expect(JSON.parse((yield* portfolio(["webhook", "show", id, "--json"])).stdout).description).toBe(description)
    }))

  it.effect("create and update refuse a description holding control characters before any call (usage, exit 2)", () =>
    Effect.gen(function*() {
      for (const args of [
        ["webhook", "create", "--tenant", "acme", "--url", "https://hooks.acme.example/in", "--description", "CI\u001b[2J"],
        ["webhook", "update", subscriptionId(9), "--description", "line\nbreak"]
      ]) {
        const { calls, result } = yield* callsDuring(portfolio(args))
        expect([args, result.code, calls]).toEqual([args, 2, []])
      }
    }))
})
