import * as NodeServices from "@effect/platform-node/NodeServices"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Layer, Redacted } from "effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { userInfo } from "node:os"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { renderLocalEnv } from "../src/LocalEnv.js"
import { OperatorSettings, withLocalEnvFallback } from "../src/OperatorSettings.js"

const secretFromFile = "secret-written-by-the-launcher-0123456789"

/** Loads the settings as the CLI does, with `env` standing for the process environment. */
const load = (env: Record<string, string>) =>
  Effect.gen(function*() {
    const provider = yield* withLocalEnvFallback(ConfigProvider.fromEnvRecord(env, { preserveEmptyStrings: true }))
    return yield* Effect.provide(OperatorSettings, OperatorSettings.layer.pipe(Layer.provide(ConfigProvider.layer(provider))))
  }).pipe(Effect.provide(NodeServices.layer))

const withDataDir = <A, E, R>(use: (dir: string) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "portfolio-config-"))),
    use,
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

describe("operator configuration", () => {
  it.effect("takes the environment first, then DATA_DIR/local.env, then the defaults", () =>
    withDataDir((dir) =>
      Effect.gen(function*() {
        writeFileSync(
          join(dir, "local.env"),
          renderLocalEnv(
            {
              INTERNAL_SECRET: secretFromFile,
              GATEWAY_ADMIN_URL: "http://127.0.0.1:9001",
              REFERENTIAL_ADMIN_URL: "http://127.0.0.1:9003",
              WEBHOOK_ADMIN_URL: "http://127.0.0.1:9007",
              CONSOLE_ADMIN_URL: "http://127.0.0.1:9009"
            },
            ["written by the launcher"]
          )
        )
        const settings = yield* load({ DATA_DIR: dir, GATEWAY_ADMIN_URL: "http://10.0.0.5:8081" })
        expect({ ...settings, secret: Redacted.value(settings.secret) }).toEqual({
          secret: secretFromFile,
          operator: `operator:${userInfo().username}`,
          gatewayAdminUrl: "http://10.0.0.5:8081",
          provisioningAdminUrl: "http://127.0.0.1:8085",
          referentialAdminUrl: "http://127.0.0.1:9003",
          webhookAdminUrl: "http://127.0.0.1:9007",
          consoleAdminUrl: "http://127.0.0.1:9009"
        })
      })
    ))

  it.effect("without local.env nor INTERNAL_SECRET the settings fail to load", () =>
    withDataDir((dir) =>
      Effect.gen(function*() {
        const exit = yield* Effect.exit(load({ DATA_DIR: dir }))
        expect(Exit.isFailure(exit)).toBe(true)
        const settings = yield* load({ DATA_DIR: dir, INTERNAL_SECRET: "x".repeat(32) })
        expect([settings.gatewayAdminUrl, settings.webhookAdminUrl]).toEqual(["http://127.0.0.1:8081", "http://127.0.0.1:8087"])
      })
    ))

  it.effect("refuses a short secret and a URL that is not http(s)", () =>
    withDataDir((dir) =>
      Effect.gen(function*() {
        const short = yield* Effect.flip(load({ DATA_DIR: dir, INTERNAL_SECRET: "short" }))
        expect(String(short)).toContain("INTERNAL_SECRET must be at least 32 characters")
        const badUrl = yield* Effect.flip(load({ DATA_DIR: dir, INTERNAL_SECRET: "x".repeat(32), PROVISIONING_ADMIN_URL: "localhost:8085" }))
        expect(String(badUrl)).toContain("PROVISIONING_ADMIN_URL must be an http(s) URL")
        const badWebhookUrl = yield* Effect.flip(load({ DATA_DIR: dir, INTERNAL_SECRET: "x".repeat(32), WEBHOOK_ADMIN_URL: "127.0.0.1:8087" }))
        expect(String(badWebhookUrl)).toContain("WEBHOOK_ADMIN_URL must be an http(s) URL")
      })
    ))
})
