import { DefaultPorts } from "@portfolio/platform/config"
import { Config, ConfigProvider, Context, Effect, FileSystem, Layer, Redacted } from "effect"
import { userInfo } from "node:os"
import { defaultDataDir, localEnvPath, parseLocalEnv } from "./LocalEnv.js"

export interface OperatorSettingsShape {
  readonly secret: Redacted.Redacted<string>
  /** `operator:<os user>`: the subject every admin call is signed for, so the services' logs name who did it. */
  readonly operator: string
  readonly gatewayAdminUrl: string
  readonly provisioningAdminUrl: string
  readonly referentialAdminUrl: string
  readonly webhookAdminUrl: string
  readonly consoleAdminUrl: string
}

/** A value refused for a reason of ours, said in `message` as it is. */
const refuse = <A>(valid: (value: A) => boolean, message: string) => (value: A) =>
  valid(value) ? Effect.succeed(value) : Effect.fail(new Config.ConfigError(new ConfigProvider.SourceError({ message })))

const url = (name: string, fallback: string) =>
  Config.String(name).pipe(
    Config.withDefault(fallback),
    Config.mapEffect(refuse((s) => /^https?:\/\/[^/]/.test(s), `${name} must be an http(s) URL`))
  )

const settings = Config.all({
  secret: Config.Redacted("INTERNAL_SECRET").pipe(
    Config.mapEffect(refuse((s) => Redacted.value(s).length >= 32, "INTERNAL_SECRET must be at least 32 characters"))
  ),
  gatewayAdminUrl: url("GATEWAY_ADMIN_URL", `http://127.0.0.1:${DefaultPorts.gateway.admin}`),
  provisioningAdminUrl: url("PROVISIONING_ADMIN_URL", `http://127.0.0.1:${DefaultPorts.provisioning.admin}`),
  referentialAdminUrl: url("REFERENTIAL_ADMIN_URL", `http://127.0.0.1:${DefaultPorts.referential.admin}`),
  webhookAdminUrl: url("WEBHOOK_ADMIN_URL", `http://127.0.0.1:${DefaultPorts["webhook-dispatcher"].admin}`),
  consoleAdminUrl: url("CONSOLE_ADMIN_URL", `http://127.0.0.1:${DefaultPorts.console.admin}`)
})

export class OperatorSettings extends Context.Service<OperatorSettings, OperatorSettingsShape>()("@portfolio/cli/OperatorSettings") {
  /** Reads the settings from the current `ConfigProvider` (see `withLocalEnvFallback`). */
  static readonly layer = Layer.effect(
    OperatorSettings,
    Effect.map(settings, (values) => ({ ...values, operator: `operator:${userInfo().username}` }))
  )
}

/**
 * `primary` first (the process environment in the CLI), then `<DATA_DIR>/local.env` written by
 * the launcher, so the CLI reaches the system `npm start` runs without anything exported. A
 * missing file only means there is nothing to fall back on. A variable set empty is a value, as
 * in the environment (`preserveEmptyStrings`), not an absence that a default would fill.
 */
export const withLocalEnvFallback = (primary: ConfigProvider.ConfigProvider) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const dataDir = yield* Config.String("DATA_DIR").pipe(Config.withDefault(defaultDataDir), Effect.provideService(ConfigProvider.ConfigProvider, primary))
    const file = localEnvPath(dataDir)
    const text = yield* fs.readFileString(file).pipe(
      Effect.catchIf((error) => error.reason._tag === "NotFound", () => Effect.succeed(""))
    )
    return ConfigProvider.orElse(primary, ConfigProvider.fromEnvRecord(Object.fromEntries(parseLocalEnv(text)), { preserveEmptyStrings: true }))
  })
