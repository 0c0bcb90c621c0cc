import { SqlClient, SqlSchema } from "effect/sql"
import { InternalSecret } from "@portfolio/platform/security"
import { MailArchive } from "../../ports/MailArchive.js"
import { Effect, Layer, Option, Schema } from "effect"
import { localMailKey, openMail } from "./SealedMail.js"

const StoredMailRow = Schema.Struct({
  id: Schema.Number,
  to: Schema.String,
  subject: Schema.String,
  sealedBody: Schema.Uint8Array,
  createdAt: Schema.DateTimeUtcFromDate
})

/** What the operator reads instead of a body that no longer opens; it names no way around it but a new invitation. */
export const UnreadableMailText =
  "This message cannot be read any more: it was kept under another INTERNAL_SECRET, or altered. Revoke the invitation and invite again for a new link."

/** The mail `MailerPg` kept, each body opened for the admin API (`portfolio mail list`). */
export const MailArchivePg = Layer.effect(
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
