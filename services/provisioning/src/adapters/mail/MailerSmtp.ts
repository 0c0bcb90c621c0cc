import { Unavailable } from "@portfolio/domain"
import { Mailer } from "../../ports/Mailer.js"
import { Duration, Effect, Layer, Option, Redacted } from "effect"
import nodemailer from "nodemailer"
import type { SmtpSettings } from "../../Config.js"

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
  // nodemailer's own logger would print each message, magic link included: off even if its defaults change.
  logger: false as const,
  debug: false as const,
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
export const MailerSmtp = (settings: SmtpSettings) =>
  Layer.effect(
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
            Effect.timeoutOrElse({ duration: SmtpSendDeadline, orElse: () => Effect.fail(new Error(`no answer within ${Duration.format(SmtpSendDeadline)}`)) }),
            Effect.tap((info) => Effect.logInfo("mail sent", { to: message.to, messageId: info.messageId })),
            Effect.tapError((cause) => Effect.logWarning("mail not sent", { to: message.to, ...describeFailure(cause) })),
            Effect.mapError(notSent),
            Effect.asVoid,
            Effect.withSpan("MailerSmtp.send")
          )
      })
    })
  )
