import { Effect, Option, Schema } from "effect"
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto"

/**
 * AES-256-GCM for the mail the local mailer keeps: its body holds a magic link, which must not be
 * usable from a copy of the database. The key comes from INTERNAL_SECRET, which whoever may read
 * the mail (the operator, through the admin API) holds already, so no new secret has to be
 * distributed; HKDF with a label of its own keeps it unrelated to the assertions' signing key.
 */
export const localMailKey = (internalSecret: string): Buffer =>
  Buffer.from(hkdfSync("sha256", internalSecret, "", "portfolio/provisioning/outbound_mail/v1", 32))

const MailBody = Schema.Struct({ text: Schema.String, html: Schema.String })
export type MailBody = typeof MailBody.Type
const decodeBody = Schema.decodeUnknownOption(Schema.parseJson(MailBody))

/** The row's clear columns: bound to the body, so a body moved onto another recipient's row does not open. */
export interface MailHeader {
  readonly to: string
  readonly subject: string
}

const Version = 1
const IvBytes = 12
const TagBytes = 16

const associatedData = ({ subject, to }: MailHeader) => Buffer.from(JSON.stringify([to, subject]), "utf8")

/** `version (1 byte) | IV (12) | ciphertext | tag (16)`, with a fresh random IV per message. */
export const sealMail = (key: Buffer, header: MailHeader, body: MailBody): Effect.Effect<Buffer> =>
  Effect.sync(() => {
    const iv = randomBytes(IvBytes)
    const cipher = createCipheriv("aes-256-gcm", key, iv, { authTagLength: TagBytes }).setAAD(associatedData(header))
    const ciphertext = Buffer.concat([cipher.update(JSON.stringify({ text: body.text, html: body.html }), "utf8"), cipher.final()])
    return Buffer.concat([Buffer.of(Version), iv, ciphertext, cipher.getAuthTag()])
  })

/** None when the body was sealed under another key (INTERNAL_SECRET changed since), altered or moved. */
export const openMail = (key: Buffer, header: MailHeader, sealed: Uint8Array): Option.Option<MailBody> => {
  const bytes = Buffer.from(sealed)
  if (bytes.length < 1 + IvBytes + TagBytes || bytes[0] !== Version) return Option.none()
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(1, 1 + IvBytes), { authTagLength: TagBytes })
      .setAAD(associatedData(header))
      .setAuthTag(bytes.subarray(bytes.length - TagBytes))
    const clear = Buffer.concat([decipher.update(bytes.subarray(1 + IvBytes, bytes.length - TagBytes)), decipher.final()])
    return decodeBody(clear.toString("utf8"))
  } catch {
    // GCM refuses a wrong key or an altered byte by throwing in `final`: the message cannot be opened.
    return Option.none()
  }
}
