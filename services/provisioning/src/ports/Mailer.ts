import { Context, type Effect } from "effect"
import type { Unavailable } from "@portfolio/domain"
import type { MailMessage } from "../domain/InvitationMail.js"

export interface MailerShape {
  /** Fails with `Unavailable` when the message could not be handed over for delivery. */
  readonly send: (message: MailMessage) => Effect.Effect<void, Unavailable>
}

export class Mailer extends Context.Service<Mailer, MailerShape>()("@portfolio/provisioning/Mailer") {}
