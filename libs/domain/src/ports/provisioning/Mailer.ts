import { Context, type Effect } from "effect"

export interface MailMessage {
  readonly to: string
  readonly subject: string
  readonly text: string
  readonly html: string
}

export interface MailerShape {
  readonly send: (message: MailMessage) => Effect.Effect<void>
}

export class Mailer extends Context.Tag("@portfolio/domain/ports/provisioning/Mailer")<Mailer, MailerShape>() {}
