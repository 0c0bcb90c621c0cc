import { FileSystem } from "@effect/platform"
import { DefaultPorts } from "@portfolio/platform/config/Ports"
import { Config, ConfigProvider, Context, Effect, Layer, Redacted } from "effect"
import { userInfo } from "node:os"
import { defaultDataDir, localEnvPath, parseLocalEnv } from "./LocalEnv.js"

export interface OperatorSettings {
  readonly secret: Redacted.Redacted<string>
  /** `operator:<os user>`: the subject every admin call is signed for, so the services' logs name who did it. */
  readonly operator: string
  readonly gatewayAdminUrl: string
  readonly provisioningAdminUrl: string
  readonly referentialAdminUrl: string
  readonly webhookAdminUrl: string
  readonly consoleAdminUrl: string
}

const url = (name: string, fallback: string) =>
  Config.string(name).pipe(
    Config.withDefault(fallback),
    Config.validate({ message: `${name} must be an http(s) URL`, validation: (s) => /^https?:\/\/[^/]/.test(s) })
  )

const settings = Config.all({
  secret: Config.redacted("INTERNAL_SECRET").pipe(
    Config.validate({ message: "INTERNAL_SECRET must be at least 32 characters", validation: (s) => Redacted.value(s).length >= 32 })
  ),
  gatewayAdminUrl: url("GATEWAY_ADMIN_URL", `http://127.0.0.1:${DefaultPorts.gateway.admin}`),
  provisioningAdminUrl: url("PROVISIONING_ADMIN_URL", `http://127.0.0.1:${DefaultPorts.provisioning.admin}`),
  referentialAdminUrl: url("REFERENTIAL_ADMIN_URL", `http://127.0.0.1:${DefaultPorts.referential.admin}`),
  webhookAdminUrl: url("WEBHOOK_ADMIN_URL", `http://127.0.0.1:${DefaultPorts["webhook-dispatcher"].admin}`),
  consoleAdminUrl: url("CONSOLE_ADMIN_URL", `http://127.0.0.1:${DefaultPorts.console.admin}`)
})

export class OperatorConfig extends Context.Tag("@portfolio/cli/OperatorConfig")<OperatorConfig, OperatorSettings>() {
  /** Reads the settings from the current `ConfigProvider` (see `withLocalEnvFallback`). */
  static readonly layer = Layer.effect(
    OperatorConfig,
    Effect.map(settings, (values) => ({ ...values, operator: `operator:${userInfo().username}` }))
  )
}

/**
 * `primary` first (the process environment in the CLI), then `<DATA_DIR>/local.env` written by
 * the launcher, so the CLI reaches the system `npm start` runs without anything exported. A
 * missing file only means there is nothing to fall back on.
 */
export const withLocalEnvFallback = (primary: ConfigProvider.ConfigProvider) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const dataDir = yield* Config.string("DATA_DIR").pipe(Config.withDefault(defaultDataDir), Effect.withConfigProvider(primary))
    const file = localEnvPath(dataDir)
    const text = yield* fs.readFileString(file).pipe(
      Effect.catchIf((error) => error._tag === "SystemError" && error.reason === "NotFound", () => Effect.succeed(""))
    )
    return ConfigProvider.orElse(primary, () => ConfigProvider.fromMap(new Map(parseLocalEnv(text))))
  })
