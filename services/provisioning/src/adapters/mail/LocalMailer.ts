import { SqlClient, SqlSchema } from "@effect/sql"
import { MailArchive, Mailer } from "../../ports/Mailer.js"
import { Effect, Layer, Option, Schema } from "effect"

/**
 * For local use without an SMTP server: the message goes to the log and to
 * `provisioning.outbound_mail`, where the operator CLI reads it (and the magic link in it).
 */
export const LocalMailer = Layer.effect(
  Mailer,
  Effect.map(SqlClient.SqlClient, (sql) =>
    Mailer.of({
      send: (message) =>
        Effect.gen(function*() {
          yield* sql`INSERT INTO provisioning.outbound_mail (to_address, subject, text_body, html_body)
                     VALUES (${message.to}, ${message.subject}, ${message.text}, ${message.html})`
          yield* Effect.logInfo("mail stored locally", { to: message.to, subject: message.subject, text: message.text })
        }).pipe(Effect.orDie, Effect.withSpan("LocalMailer.send"))
    }))
)

const StoredMailRow = Schema.Struct({
  id: Schema.Number,
  to: Schema.String,
  subject: Schema.String,
  text: Schema.String,
  html: Schema.String,
  createdAt: Schema.DateTimeUtcFromDate
})

export const LocalMailArchive = Layer.effect(
  MailArchive,
  Effect.map(SqlClient.SqlClient, (sql) => {
    const list = SqlSchema.findAll({
      Request: Schema.Struct({ to: Schema.NullOr(Schema.String), limit: Schema.Number }),
      Result: StoredMailRow,
      execute: ({ limit, to }) =>
        sql`SELECT id, to_address AS "to", subject, text_body AS text, html_body AS html, created_at FROM provisioning.outbound_mail
            WHERE ${to === null ? sql`TRUE` : sql`lower(to_address) = lower(${to})`}
            ORDER BY id DESC LIMIT ${limit}`
    })
    return MailArchive.of({
      list: (to, limit) => list({ to: Option.getOrNull(to), limit }).pipe(Effect.orDie)
    })
  })
)
