import { booleanSetting, DefaultPorts, integerAtLeast, invalidSetting, missingSetting, parsedSetting } from "@portfolio/platform/config"
import { listenSettings } from "@portfolio/platform/http"
import { Config, Context, Effect, Result, Layer, Option, Redacted } from "effect"

export interface ProvisioningSettingsShape {
  /** Base of the magic links: the link is `<acceptUrl>/<token>`. Never derived from a request's Host. */
  readonly acceptUrl: string
  readonly invitationsPerTenantPerHour: number
  /**
   * Reverse proxies in front of the public port (the ingress before the acceptance page, the gateway
   * before the API) whose X-Forwarded-For entries are trusted for the client address the security
   * log records (`TRUSTED_PROXY_HOPS`, as the gateway's and the console's).
   */
  readonly trustedProxyHops: number
  /**
   * The console's address (`CONSOLE_URL`, as the console reads it): where an identity provider sends
   * the browser back after a single sign-on, `<CONSOLE_URL>/sso/<slug>/callback`.
   */
  readonly consoleUrl: string
  /**
   * Whether a connection may name a plain-http issuer on a loopback address
   * (`SSO_ALLOW_LOOPBACK_ISSUERS`, off by default; `npm start` sets it so that a provider on this
   * machine can be tried).
   */
  readonly allowLoopbackIssuers: boolean
  /**
   * The public API's base URL as clients reach it, /api/v1 included (`PUBLIC_BASE_URL`, as the
   * gateway publishes it): SCIM answers give each User's absolute URI (`Location`, `meta.location`),
   * which the gateway's forwarded request does not carry.
   */
  readonly publicBaseUrl: string
}

/** A URL as Effect 3's `Config.url` read it, refused in its words: the line an operator reads at start. */
const urlSetting = (name: string) =>
  parsedSetting(name, (text) =>
    URL.canParse(text) ? Result.succeed(new URL(text)) : Result.fail(`Expected an URL value but received ${JSON.stringify(text)}`))

export class ProvisioningSettings extends Context.Service<
  ProvisioningSettings,
  ProvisioningSettingsShape
>()("@portfolio/provisioning/ProvisioningSettings") {
  /**
   * `PUBLIC_ACCEPT_URL` names the acceptance page itself; otherwise it is `PUBLIC_URL` (provisioning's
   * public address) + `/accept`; otherwise `http://localhost:<PORT>/accept`.
   */
  static readonly layer = Layer.effect(
    ProvisioningSettings,
    Effect.gen(function*() {
      const { port } = yield* listenSettings("provisioning", "api")
      const publicUrl = yield* urlSetting("PUBLIC_URL").pipe(Config.option)
      const acceptUrl = yield* urlSetting("PUBLIC_ACCEPT_URL").pipe(Config.option)
      const base = Option.match(acceptUrl, {
        onSome: (url) => url.href,
        onNone: () =>
          Option.match(publicUrl, {
            onSome: (url) => `${url.href.replace(/\/+$/, "")}/accept`,
            onNone: () => `http://localhost:${port}/accept`
          })
      })
      const invitationsPerTenantPerHour = yield* integerAtLeast("INVITATIONS_PER_TENANT_PER_HOUR", 1, 100)
      const trustedProxyHops = yield* integerAtLeast("TRUSTED_PROXY_HOPS", 0, 0, "must be 0 or more")
      const consoleUrl = yield* Config.String("CONSOLE_URL").pipe(
        Config.mapEffect((s) =>
          /^https?:\/\/[^/]/.test(s) && URL.canParse(s) && new URL(s).pathname.replace(/\/$/, "") === "/console"
            ? Effect.succeed(s)
            : Effect.fail(invalidSetting("CONSOLE_URL", "must be an http(s) URL ending with /console"))
        ),
        Config.withDefault(`http://127.0.0.1:${DefaultPorts.console.api}/console`)
      )
      const allowLoopbackIssuers = yield* booleanSetting("SSO_ALLOW_LOOPBACK_ISSUERS").pipe(Config.withDefault(false))
      const publicBaseUrl = yield* urlSetting("PUBLIC_BASE_URL").pipe(
        Config.withDefault(new URL(`http://localhost:${DefaultPorts.gateway.api}/api/v1`))
      )
      return {
        publicBaseUrl: publicBaseUrl.href.replace(/\/+$/, ""),
        acceptUrl: base.replace(/\/+$/, ""),
        invitationsPerTenantPerHour,
        trustedProxyHops,
        consoleUrl: consoleUrl.replace(/\/+$/, ""),
        allowLoopbackIssuers
      }
    })
  )
}

export interface SmtpServer {
  readonly host: string
  /** Absent: nodemailer's default, 465 for smtps and 587 for smtp. */
  readonly port: Option.Option<number>
  /** smtps: TLS from the first byte; smtp: plain, upgraded by STARTTLS when the server offers it. */
  readonly secure: boolean
  readonly auth: Option.Option<{ readonly user: string; readonly pass: Redacted.Redacted<string> }>
}

export interface SmtpSettings {
  readonly server: SmtpServer
  readonly from: { readonly name: string; readonly address: string }
}

const invalid = (variable: string, message: string) => Result.fail(invalidSetting(variable, message))

const urlShape = "must be smtp://[user:password@]host[:port] or smtps://[user:password@]host[:port]"

// The URL carries a password: no message below may echo the value.
const parseSmtpUrl = (value: Redacted.Redacted<string>): Result.Result<SmtpServer, Config.ConfigError> => {
  if (!URL.canParse(Redacted.value(value))) return invalid("SMTP_URL", `${urlShape} (not a URL)`)
  const url = new URL(Redacted.value(value))
  if (url.protocol !== "smtp:" && url.protocol !== "smtps:") return invalid("SMTP_URL", `${urlShape} (another scheme)`)
  if (url.hostname === "") return invalid("SMTP_URL", `${urlShape} (no host)`)
  if ((url.pathname !== "" && url.pathname !== "/") || url.search !== "" || url.hash !== "") {
    return invalid("SMTP_URL", `${urlShape} (no path, query or fragment)`)
  }
  if (url.password !== "" && url.username === "") return invalid("SMTP_URL", `${urlShape} (a password without a user)`)
  return Result.succeed({
    host: url.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: url.port === "" ? Option.none() : Option.some(Number(url.port)),
    secure: url.protocol === "smtps:",
    auth: url.username === ""
      ? Option.none()
      : Option.some({ user: decodeURIComponent(url.username), pass: Redacted.make(decodeURIComponent(url.password)) })
  })
}

/** `local@domain` with none of RFC 5322's specials, spaces or quotes in either part. */
const AddrSpec = /^[^\s@<>()[\]",;:\\]+@[^\s@<>()[\]",;:\\]+$/

/**
 * One mailbox of RFC 5322, in the two spellings a sender setting needs: `local@domain`, or a display
 * name before `<local@domain>`, the name in plain words (dots allowed, as in "J. Doe") or quoted
 * with backslash escapes (`"Doe, Jane" <jane@example.com>`). Lists, groups, comments and the
 * obsolete forms are refused rather than guessed at.
 */
export const parseMailbox = (value: string): { readonly name: string; readonly address: string } | undefined => {
  const text = value.trim()
  if (AddrSpec.test(text)) return { name: "", address: text }
  const angled = /^([^<>]*?)\s*<([^<>]*)>$/.exec(text)
  if (angled === null || !AddrSpec.test(angled[2]!)) return undefined
  const display = angled[1]!.trim()
  if (display.startsWith("\"")) {
    const quoted = /^"((?:[^"\\]|\\.)*)"$/.exec(display)
    return quoted === null ? undefined : { name: quoted[1]!.replace(/\\(.)/g, "$1"), address: angled[2]! }
  }
  return /[()<>[\]:;@\\,"]/.test(display) ? undefined : { name: display, address: angled[2]! }
}

const parseSender = (value: string): Result.Result<SmtpSettings["from"], Config.ConfigError> => {
  const mailbox = parseMailbox(value)
  return mailbox === undefined
    ? invalid("MAIL_FROM", "must be one address, such as no-reply@example.com or \"Architecture Portfolio <no-reply@example.com>\"")
    : Result.succeed(mailbox)
}

/**
 * The SMTP settings when `SMTP_URL` is set. `MAIL_FROM` defaults to a no-reply address on the host
 * of the public acceptance URL, the address the invitees already see in the link.
 */
export const smtpSettings = Effect.gen(function*() {
  const server = yield* Config.Redacted("SMTP_URL").pipe(Config.mapEffect((url) => Effect.fromResult(parseSmtpUrl(url))), Config.option)
  if (Option.isNone(server)) return Option.none<SmtpSettings>()
  const { acceptUrl } = yield* ProvisioningSettings
  const from = yield* Config.String("MAIL_FROM").pipe(
    Config.withDefault(`Architecture Portfolio <no-reply@${new URL(acceptUrl).hostname}>`),
    Config.mapEffect((sender) => Effect.fromResult(parseSender(sender)))
  )
  return Option.some<SmtpSettings>({ server: server.value, from })
})

export type MailTransport =
  | { readonly _tag: "Local" }
  | { readonly _tag: "Smtp"; readonly settings: SmtpSettings }

const MailTransports = ["smtp", "local"] as const

/** `MAIL_TRANSPORT`, refused in Effect 3's words (`Config.literal`'s). */
const mailTransportSetting = parsedSetting("MAIL_TRANSPORT", (value) => {
  const found = MailTransports.find((transport) => transport === value)
  return found === undefined ? Result.fail(`Expected one of (${MailTransports.join(", ")}) but received ${JSON.stringify(value)}`) : Result.succeed(found)
})

/**
 * How invitation mail leaves: through SMTP, unless `MAIL_TRANSPORT=local` says explicitly that mail
 * (magic links included) is to be kept, encrypted, in the database for `portfolio mail list`. A
 * production deployment that forgot `SMTP_URL` must not start and quietly keep every magic link
 * away from its invitees, so SMTP is the default and `SMTP_URL` is required with it.
 */
export const mailTransport = Effect.gen(function*() {
  const transport = yield* mailTransportSetting.pipe(Config.withDefault("smtp" as const))
  const smtp = yield* smtpSettings
  if (transport === "local") {
    if (Option.isSome(smtp)) {
      return yield* Effect.fail(invalidSetting("MAIL_TRANSPORT", "is 'local' while SMTP_URL is set; unset SMTP_URL to keep mail locally, or MAIL_TRANSPORT to send it"))
    }
    return { _tag: "Local" } as MailTransport
  }
  if (Option.isNone(smtp)) {
    return yield* Effect.fail(missingSetting(
      "SMTP_URL",
      "is required to send invitation mail; for local use only, MAIL_TRANSPORT=local keeps mail (magic links included) in the database, encrypted, for `portfolio mail list` instead"
    ))
  }
  return { _tag: "Smtp", settings: smtp.value } as MailTransport
})
