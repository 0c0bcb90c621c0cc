import { SqlClient, SqlSchema } from "@effect/sql"
import { InternalSecret } from "@portfolio/platform/security"
import { MailArchive, Mailer } from "../../ports/Mailer.js"
import { Effect, Layer, Option, Schema } from "effect"
import { localMailKey, openMail, sealMail } from "./SealedMail.js"

/**
 * For local use without an SMTP server: the message goes to `provisioning.outbound_mail`, its body
 * (and so the magic link) sealed, where the operator CLI reads it through the admin API. The log
 * names the recipient and the subject only: a log line would hold a usable link in clear.
 */
export const MailerLocal = Layer.effect(
  Mailer,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const key = localMailKey(yield* InternalSecret)
    return Mailer.of({
      send: (message) =>
        Effect.gen(function*() {
          const sealed = yield* sealMail(key, message, message)
          yield* sql`INSERT INTO provisioning.outbound_mail (to_address, subject, sealed_body)
                     VALUES (${message.to}, ${message.subject}, ${sealed})`
          yield* Effect.logInfo("mail stored locally; read it with `portfolio mail list`", { to: message.to, subject: message.subject })
        }).pipe(Effect.orDie, Effect.withSpan("MailerLocal.send"))
    })
  })
)

const StoredMailRow = Schema.Struct({
  id: Schema.Number,
  to: Schema.String,
  subject: Schema.String,
  sealedBody: Schema.Uint8ArrayFromSelf,
  createdAt: Schema.DateTimeUtcFromDate
})

/** What the operator reads instead of a body that no longer opens; it names no way around it but a new invitation. */
export const UnreadableMailText =
  "This message cannot be read any more: it was kept under another INTERNAL_SECRET, or altered. Revoke the invitation and invite again for a new link."

export const MailArchiveLocal = Layer.effect(
  MailArchive,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const key = localMailKey(yield* InternalSecret)
    const list = SqlSchema.findAll({
      Request: Schema.Struct({ to: Schema.NullOr(Schema.String), limit: Schema.Number }),
      Result: StoredMailRow,
      execute: ({ limit, to }) =>
        sql`SELECT id, to_address AS "to", subject, sealed_body, created_at FROM provisioning.outbound_mail
            WHERE ${to === null ? sql`TRUE` : sql`lower(to_address) = lower(${to})`}
            ORDER BY id DESC LIMIT ${limit}`
    })
    return MailArchive.of({
      list: (to, limit) =>
        list({ to: Option.getOrNull(to), limit }).pipe(
          Effect.map((rows) =>
            rows.map(({ createdAt, id, sealedBody, subject, to }) => {
              const body = Option.getOrElse(openMail(key, { to, subject }, sealedBody), () => ({ text: UnreadableMailText, html: `<p>${UnreadableMailText}</p>` }))
              return { id, to, subject, text: body.text, html: body.html, createdAt }
            })),
          Effect.orDie
        )
    })
  })
)
