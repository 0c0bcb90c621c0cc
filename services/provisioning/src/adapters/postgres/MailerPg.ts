import { SqlClient } from "effect/sql"
import { InternalSecret } from "@portfolio/platform/security"
import { Mailer } from "../../ports/Mailer.js"
import { Effect, Layer } from "effect"
import { localMailKey, sealMail } from "./SealedMail.js"

/**
 * For local use without an SMTP server: the message goes to `provisioning.outbound_mail`, its body
 * (and so the magic link) sealed, where the operator CLI reads it through the admin API. The log
 * names the recipient and the subject only: a log line would hold a usable link in clear.
 */
export const MailerPg = Layer.effect(
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
        }).pipe(Effect.orDie, Effect.withSpan("MailerPg.send"))
    })
  })
)
