import { DefaultPorts, integerAtLeast, invalidSetting } from "@portfolio/platform/config"
import { Config, Context, Effect, Layer } from "effect"
import type { SessionPolicy } from "./domain/SessionRules.js"
import type { LockoutPolicy } from "./domain/SignInRules.js"

export interface ConsoleSettingsShape {
  /**
   * The console's address as browsers reach it, ending in `/console`: its scheme decides the
   * cookie's Secure flag, its origin is the only one forms are taken from.
   */
  readonly consoleUrl: URL
  /** The public API's base URL, shown beside a new token. */
  readonly publicApiUrl: string
  readonly session: SessionPolicy
  readonly lockout: LockoutPolicy
  readonly trustedProxyHops: number
  readonly gatewayAdminUrl: string
  readonly provisioningAdminUrl: string
  readonly webhookAdminUrl: string
}

/** A text setting, refused with `message` unless `validation` holds. */
const validated = (name: string, message: string, validation: (s: string) => boolean) =>
  Config.mapEffect((s: string) => (validation(s) ? Effect.succeed(s) : Effect.fail(invalidSetting(name, message))))

const httpUrl = (name: string, fallback: string) =>
  Config.String(name).pipe(
    validated(name, "must be an http(s) URL", (s) => /^https?:\/\/[^/]/.test(s)),
    Config.withDefault(fallback)
  )

export class ConsoleSettings extends Context.Service<ConsoleSettings, ConsoleSettingsShape>()("@portfolio/console/ConsoleSettings") {
  static readonly config = Config.all({
    consoleUrl: httpUrl("CONSOLE_URL", `http://127.0.0.1:${DefaultPorts.console.api}/console`).pipe(
      validated("CONSOLE_URL", "must end with /console", (s) => new URL(s).pathname.replace(/\/$/, "") === "/console"),
      Config.map((s) => new URL(s))
    ),
    publicApiUrl: httpUrl("PUBLIC_BASE_URL", `http://localhost:${DefaultPorts.gateway.api}/api/v1`),
    sessionHours: integerAtLeast("CONSOLE_SESSION_HOURS", 1, 8),
    idleMinutes: integerAtLeast("CONSOLE_SESSION_IDLE_MINUTES", 1, 30),
    maxFailures: integerAtLeast("CONSOLE_SIGN_IN_MAX_FAILURES", 1, 5),
    maxAddressFailures: integerAtLeast("CONSOLE_SIGN_IN_MAX_FAILURES_PER_ADDRESS", 1, 50),
    lockoutMinutes: integerAtLeast("CONSOLE_LOCKOUT_MINUTES", 1, 15),
    trustedProxyHops: integerAtLeast("TRUSTED_PROXY_HOPS", 0, 0, "must be 0 or more"),
    gatewayAdminUrl: httpUrl("GATEWAY_ADMIN_URL", `http://127.0.0.1:${DefaultPorts.gateway.admin}`),
    provisioningAdminUrl: httpUrl("PROVISIONING_ADMIN_URL", `http://127.0.0.1:${DefaultPorts.provisioning.admin}`),
    webhookAdminUrl: httpUrl("WEBHOOK_ADMIN_URL", `http://127.0.0.1:${DefaultPorts["webhook-dispatcher"].admin}`)
  }).pipe(
    Config.map((c): ConsoleSettingsShape => ({
      consoleUrl: c.consoleUrl,
      publicApiUrl: c.publicApiUrl.replace(/\/$/, ""),
      session: { absoluteMs: c.sessionHours * 3_600_000, idleMs: c.idleMinutes * 60_000 },
      lockout: { maxFailuresPerEmail: c.maxFailures, maxFailuresPerAddress: c.maxAddressFailures, windowMs: c.lockoutMinutes * 60_000 },
      trustedProxyHops: c.trustedProxyHops,
      gatewayAdminUrl: c.gatewayAdminUrl,
      provisioningAdminUrl: c.provisioningAdminUrl,
      webhookAdminUrl: c.webhookAdminUrl
    }))
  )

  static readonly layer = Layer.effect(ConsoleSettings, ConsoleSettings.config)
}
