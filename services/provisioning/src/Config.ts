import { listenSettings } from "@portfolio/platform"
import { Config, Context, Effect, Layer, Option } from "effect"

export interface ProvisioningSettingsShape {
  /** Base of the magic links: the link is `<acceptUrl>/<token>`. Never derived from a request's Host. */
  readonly acceptUrl: string
  readonly invitationsPerTenantPerHour: number
}

export class ProvisioningSettings extends Context.Tag("@portfolio/provisioning/ProvisioningSettings")<
  ProvisioningSettings,
  ProvisioningSettingsShape
>() {
  /**
   * `PUBLIC_ACCEPT_URL` names the acceptance page itself; otherwise it is `PUBLIC_URL` (provisioning's
   * public address) + `/accept`; otherwise `http://localhost:<PORT>/accept`.
   */
  static readonly layer = Layer.effect(
    ProvisioningSettings,
    Effect.gen(function*() {
      const { port } = yield* listenSettings("provisioning", "api")
      const publicUrl = yield* Config.url("PUBLIC_URL").pipe(Config.option)
      const acceptUrl = yield* Config.url("PUBLIC_ACCEPT_URL").pipe(Config.option)
      const base = Option.match(acceptUrl, {
        onSome: (url) => url.href,
        onNone: () =>
          Option.match(publicUrl, {
            onSome: (url) => `${url.href.replace(/\/+$/, "")}/accept`,
            onNone: () => `http://localhost:${port}/accept`
          })
      })
      // Validated before the default is attached: the other way round, the refusal names no variable.
      const invitationsPerTenantPerHour = yield* Config.integer("INVITATIONS_PER_TENANT_PER_HOUR").pipe(
        Config.validate({ message: "must be at least 1", validation: (n) => n >= 1 }),
        Config.withDefault(100)
      )
      return { acceptUrl: base.replace(/\/+$/, ""), invitationsPerTenantPerHour }
    })
  )
}
