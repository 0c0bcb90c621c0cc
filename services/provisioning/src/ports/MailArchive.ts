import { Context, type DateTime, type Effect, type Option } from "effect"
import type { MailMessage } from "../domain/InvitationMail.js"

export interface StoredMail extends MailMessage {
  readonly id: number
  readonly createdAt: DateTime.Utc
}

/** The messages the local mailer kept, for the operator to complete an invitation without SMTP. */
export interface MailArchiveShape {
  /** Newest first, at most `limit`; only those sent to `to` (case-insensitively) when it is given. */
  readonly list: (to: Option.Option<string>, limit: number) => Effect.Effect<ReadonlyArray<StoredMail>>
}

export class MailArchive extends Context.Service<MailArchive, MailArchiveShape>()("@portfolio/provisioning/MailArchive") {}
