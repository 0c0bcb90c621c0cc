import { SqlClient } from "@effect/sql"
import { databaseReady, ErrorsUrl, NatsConfig, InternalSecret, PgLive, runService } from "@portfolio/platform"
import type { Mailer } from "./ports/Mailer.js"
import { Effect, Layer } from "effect"
import { servers } from "./adapters/http/Servers.js"
import { LocalMailArchive, LocalMailer } from "./adapters/mail/LocalMailer.js"
import { mailTransport, SmtpMailer } from "./adapters/mail/SmtpMailer.js"
import { JetStreamPublisherLive } from "./adapters/nats/JetStreamPublisher.js"
import { ProvisioningMigrationsLive } from "./adapters/postgres/Migrations.js"
import { outboxRelayLayer } from "./adapters/postgres/OutboxRelay.js"
import { PostgresAdapters } from "./adapters/postgres/PostgresAdapters.js"
import { ProvisioningSettings } from "./Config.js"

const adapters = (mailer: Layer.Layer<Mailer, never, SqlClient.SqlClient>) => Layer.mergeAll(PostgresAdapters, mailer, LocalMailArchive)

// The mail settings are read before anything connects, so that a missing SMTP_URL stops the
// process with its own message rather than behind a database or NATS failure. MAIL_TRANSPORT=local
// keeps mail on this machine (log and provisioning.outbound_mail); otherwise SMTP.
const Infra = Layer.unwrapEffect(
  Effect.map(mailTransport.pipe(Effect.provide(ProvisioningSettings.layer)), (transport) =>
    Layer.mergeAll(
      adapters(transport._tag === "Local" ? LocalMailer : SmtpMailer(transport.settings)),
      outboxRelayLayer(JetStreamPublisherLive.pipe(Layer.provide(NatsConfig.layer))),
      ProvisioningSettings.layer,
      InternalSecret.layer,
      ErrorsUrl.layer
    ).pipe(Layer.provideMerge(ProvisioningMigrationsLive), Layer.provideMerge(PgLive)))
)


runService("provisioning", Infra, servers(databaseReady))
