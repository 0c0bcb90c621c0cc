import { SqlClient } from "@effect/sql"
import { Mailer } from "@portfolio/domain/ports/provisioning"
import { Effect, Layer } from "effect"

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
