import { openSealed, sealBytes, sealingKey } from "@portfolio/platform/security"
import { type Effect, Option, Schema } from "effect"

/**
 * The mail the local mailer keeps is sealed (libs/platform/src/security/Sealing.ts): its body holds a magic
 * link, which must not be usable from a copy of the database. Whoever may read the mail (the
 * operator, through the admin API) holds INTERNAL_SECRET already, so the key is derived from it.
 */
export const localMailKey = (internalSecret: string): Buffer => sealingKey(internalSecret, "portfolio/provisioning/outbound_mail/v1")

const MailBody = Schema.Struct({ text: Schema.String, html: Schema.String })
export type MailBody = typeof MailBody.Type
const decodeBody = Schema.decodeUnknownOption(Schema.fromJsonString(MailBody))

/** The row's clear columns: bound to the body, so a body moved onto another recipient's row does not open. */
export interface MailHeader {
  readonly to: string
  readonly subject: string
}

const associatedData = ({ subject, to }: MailHeader) => Buffer.from(JSON.stringify([to, subject]), "utf8")

export const sealMail = (key: Buffer, header: MailHeader, body: MailBody): Effect.Effect<Buffer> =>
  sealBytes(key, associatedData(header), Buffer.from(JSON.stringify({ text: body.text, html: body.html }), "utf8"))

/** None when the body was sealed under another key (INTERNAL_SECRET changed since), altered or moved. */
export const openMail = (key: Buffer, header: MailHeader, sealed: Uint8Array): Option.Option<MailBody> =>
  Option.flatMap(openSealed(key, associatedData(header), sealed), (clear) => decodeBody(clear.toString("utf8")))
