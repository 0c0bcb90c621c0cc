import { SqlClient } from "@effect/sql"
import { ErrorsUrl, InternalSecret, PgLive, runService } from "@portfolio/platform"
import type { Mailer } from "@portfolio/domain/ports/provisioning"
import { Effect, Layer } from "effect"
import { servers } from "./http/Servers.js"
import { LocalMailArchive, LocalMailer } from "./mail/LocalMailer.js"
import { mailTransport, SmtpMailer } from "./mail/SmtpMailer.js"
import { JetStreamPublisherLive } from "./nats/JetStreamPublisher.js"
import { ProvisioningMigrationsLive } from "./postgres/Migrations.js"
import { outboxRelayLayer } from "./postgres/OutboxRelay.js"
import { PostgresAdapters } from "./postgres/PostgresAdapters.js"
import { ProvisioningSettings } from "./Settings.js"

const adapters = (mailer: Layer.Layer<Mailer, never, SqlClient.SqlClient>) => Layer.mergeAll(PostgresAdapters, mailer, LocalMailArchive)

// The mail settings are read before anything connects, so that a missing SMTP_URL stops the
// process with its own message rather than behind a database or NATS failure. MAIL_TRANSPORT=local
// keeps mail on this machine (log and provisioning.outbound_mail); otherwise SMTP.
const Infra = Layer.unwrapEffect(
  Effect.map(mailTransport.pipe(Effect.provide(ProvisioningSettings.layer)), (transport) =>
    Layer.mergeAll(
      adapters(transport._tag === "Local" ? LocalMailer : SmtpMailer(transport.settings)),
      outboxRelayLayer(JetStreamPublisherLive),
      ProvisioningSettings.layer,
      InternalSecret.layer,
      ErrorsUrl.layer
    ).pipe(Layer.provideMerge(ProvisioningMigrationsLive), Layer.provideMerge(PgLive)))
)

const ready = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT 1`)

runService("provisioning", Infra, servers(ready))
