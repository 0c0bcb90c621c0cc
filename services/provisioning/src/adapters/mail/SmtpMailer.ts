import { Unavailable } from "@portfolio/domain"
import { Mailer } from "../../ports/Mailer.js"
import { Config, ConfigError, Duration, Effect, Either, Layer, Option, Redacted } from "effect"
import nodemailer from "nodemailer"
import addressparser from "nodemailer/lib/addressparser/index.js"
import { ProvisioningSettings } from "../../Config.js"

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

const invalid = (variable: string, message: string) => Either.left(ConfigError.InvalidData([variable], message))

const urlShape = "must be smtp://[user:password@]host[:port] or smtps://[user:password@]host[:port]"

// The URL carries a password: no message below may echo the value.
const parseSmtpUrl = (value: Redacted.Redacted<string>): Either.Either<SmtpServer, ConfigError.ConfigError> => {
  if (!URL.canParse(Redacted.value(value))) return invalid("SMTP_URL", `${urlShape} (not a URL)`)
  const url = new URL(Redacted.value(value))
  if (url.protocol !== "smtp:" && url.protocol !== "smtps:") return invalid("SMTP_URL", `${urlShape} (another scheme)`)
  if (url.hostname === "") return invalid("SMTP_URL", `${urlShape} (no host)`)
  if ((url.pathname !== "" && url.pathname !== "/") || url.search !== "" || url.hash !== "") {
    return invalid("SMTP_URL", `${urlShape} (no path, query or fragment)`)
  }
  if (url.password !== "" && url.username === "") return invalid("SMTP_URL", `${urlShape} (a password without a user)`)
  return Either.right({
    host: url.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: url.port === "" ? Option.none() : Option.some(Number(url.port)),
    secure: url.protocol === "smtps:",
    auth: url.username === ""
      ? Option.none()
      : Option.some({ user: decodeURIComponent(url.username), pass: Redacted.make(decodeURIComponent(url.password)) })
  })
}

const parseSender = (value: string): Either.Either<SmtpSettings["from"], ConfigError.ConfigError> => {
  const parsed = addressparser(value)
  const [only] = parsed
  if (parsed.length !== 1 || only === undefined || !("address" in only) || !/^[^\s@]+@[^\s@]+$/.test(only.address)) {
    return invalid("MAIL_FROM", "must be one address, such as no-reply@example.com or \"Architecture Portfolio <no-reply@example.com>\"")
  }
  return Either.right({ name: only.name, address: only.address })
}

/**
 * The SMTP settings when `SMTP_URL` is set. `MAIL_FROM` defaults to a no-reply address on the host
 * of the public acceptance URL, the address the invitees already see in the link.
 */
export const smtpSettings = Effect.gen(function*() {
  const server = yield* Config.redacted("SMTP_URL").pipe(Config.mapOrFail(parseSmtpUrl), Config.option)
  if (Option.isNone(server)) return Option.none<SmtpSettings>()
  const { acceptUrl } = yield* ProvisioningSettings
  const from = yield* Config.string("MAIL_FROM").pipe(
    Config.withDefault(`Architecture Portfolio <no-reply@${new URL(acceptUrl).hostname}>`),
    Config.mapOrFail(parseSender)
  )
  return Option.some<SmtpSettings>({ server: server.value, from })
})

export type MailTransport =
  | { readonly _tag: "Local" }
  | { readonly _tag: "Smtp"; readonly settings: SmtpSettings }

/**
 * How invitation mail leaves: through SMTP, unless `MAIL_TRANSPORT=local` says explicitly that mail
 * (magic links included) is to be kept in the database and the log. A production deployment that
 * forgot `SMTP_URL` must not start and quietly log every magic link, so SMTP is the default and
 * `SMTP_URL` is required with it.
 */
export const mailTransport = Effect.gen(function*() {
  const transport = yield* Config.literal("smtp", "local")("MAIL_TRANSPORT").pipe(Config.withDefault("smtp" as const))
  const smtp = yield* smtpSettings
  if (transport === "local") {
    if (Option.isSome(smtp)) {
      return yield* Effect.fail(ConfigError.InvalidData(["MAIL_TRANSPORT"], "is 'local' while SMTP_URL is set; unset SMTP_URL to keep mail locally, or MAIL_TRANSPORT to send it"))
    }
    return { _tag: "Local" } as MailTransport
  }
  if (Option.isNone(smtp)) {
    return yield* Effect.fail(ConfigError.MissingData(
      ["SMTP_URL"],
      "is required to send invitation mail; for local use only, MAIL_TRANSPORT=local keeps mail (magic links included) in the database and the log instead"
    ))
  }
  return { _tag: "Smtp", settings: smtp.value } as MailTransport
})

const isLoopback = (host: string) => host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host)

// Bounded so that a silent server cannot hold the creating transaction (and the tenant's row lock)
// for long, and so that the caller gets our 503 rather than the gateway's upstream timeout (25 s by
// default): connect and greeting within 5 s each, 10 s of silence at most afterwards.
const ConnectionTimeout = Duration.seconds(5)
const GreetingTimeout = Duration.seconds(5)
const SocketTimeout = Duration.seconds(10)
/** The whole send, including the wait for a free pooled connection, which nodemailer does not bound. */
export const SmtpSendDeadline = Duration.seconds(15)

export const smtpTransportOptions = ({ server }: SmtpSettings) => ({
  pool: true as const,
  host: server.host,
  secure: server.secure,
  // Credentials never cross the network in clear; only a relay on this machine is exempt.
  requireTLS: Option.isSome(server.auth) && !server.secure && !isLoopback(server.host),
  connectionTimeout: Duration.toMillis(ConnectionTimeout),
  greetingTimeout: Duration.toMillis(GreetingTimeout),
  socketTimeout: Duration.toMillis(SocketTimeout),
  ...Option.match(server.port, { onNone: () => ({}), onSome: (port) => ({ port }) }),
  ...Option.match(server.auth, { onNone: () => ({}), onSome: ({ pass, user }) => ({ auth: { user, pass: Redacted.value(pass) } }) })
})

const notSent = () => new Unavailable({ detail: "The e-mail could not be sent; retry shortly." })

const describeFailure = (error: unknown) =>
  error instanceof Error
    ? { reason: error.message, code: "code" in error ? String(error.code) : undefined, responseCode: "responseCode" in error ? error.responseCode : undefined }
    : { reason: String(error) }

/**
 * Sends through a pooled SMTP connection. A message the server does not take fails with
 * `Unavailable`, so that the caller can undo what the mail was meant to announce. Nothing here
 * logs a message's content: it carries the magic link.
 */
export const SmtpMailer = (settings: SmtpSettings) =>
  Layer.scoped(
    Mailer,
    Effect.gen(function*() {
      const transport = yield* Effect.acquireRelease(
        Effect.sync(() => nodemailer.createTransport(smtpTransportOptions(settings))),
        (transport) => Effect.sync(() => transport.close())
      )
      const server = { host: settings.server.host, port: Option.getOrUndefined(settings.server.port), secure: settings.server.secure }
      yield* Effect.logInfo("mail goes through SMTP", { ...server, from: settings.from.address })
      // A wrong host or password shows in the log at start rather than at the first invitation.
      yield* Effect.tryPromise({ try: () => transport.verify(), catch: (cause) => cause }).pipe(
        Effect.tapError((cause) => Effect.logWarning("SMTP server not usable yet", { ...server, ...describeFailure(cause) })),
        Effect.ignore,
        Effect.forkScoped
      )
      return Mailer.of({
        send: (message) =>
          Effect.tryPromise({
            try: () =>
              transport.sendMail({
                from: settings.from,
                to: message.to,
                subject: message.subject,
                text: message.text,
                html: message.html,
                headers: { "Auto-Submitted": "auto-generated" }
              }),
            catch: (cause) => cause
          }).pipe(
            Effect.timeoutFail({ duration: SmtpSendDeadline, onTimeout: () => new Error(`no answer within ${Duration.format(SmtpSendDeadline)}`) }),
            Effect.tap((info) => Effect.logInfo("mail sent", { to: message.to, messageId: info.messageId })),
            Effect.tapError((cause) => Effect.logWarning("mail not sent", { to: message.to, ...describeFailure(cause) })),
            Effect.mapError(notSent),
            Effect.asVoid,
            Effect.withSpan("SmtpMailer.send")
          )
      })
    })
  )
