import { OutboundMail } from "@portfolio/domain"
import { MailArchive } from "../ports/MailArchive.js"
import { Effect, Option } from "effect"

const MailListLimit = 50

/** The latest messages the local mailer kept, newest first, optionally for one recipient. */
export const listOutboundMail = Effect.fn("listOutboundMail")(function*(to: string | undefined) {
  const archive = yield* MailArchive
  const stored = yield* archive.list(Option.fromNullishOr(to?.trim()), MailListLimit)
  return stored.map(({ createdAt, id, subject, text, to }) => new OutboundMail({ id, to, subject, text, createdAt }))
})
