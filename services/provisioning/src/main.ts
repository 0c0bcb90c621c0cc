import { databaseReady, ErrorsUrl, InternalSecret, JetStreamPublisher, NatsConfig, OutboxRelay, PgLive, runService } from "@portfolio/platform"
import { Effect, Layer } from "effect"
import { servers } from "./adapters/http/Servers.js"
import { LocalMailArchive, LocalMailer } from "./adapters/mail/LocalMailer.js"
import { SmtpMailer } from "./adapters/mail/SmtpMailer.js"
import { SubscriptionDisabledListenerLive } from "./adapters/nats/SubscriptionDisabledConsumer.js"
import { ProvisioningMigrationsLive } from "./adapters/postgres/Migrations.js"
import { PostgresAdapters } from "./adapters/postgres/PostgresAdapters.js"
import { mailTransport, ProvisioningSettings } from "./Config.js"

// The mail settings are read before anything connects, so that a missing SMTP_URL stops the
// process with its own message rather than behind a database or NATS failure.
const Infra = Layer.unwrapEffect(
  Effect.map(mailTransport.pipe(Effect.provide(ProvisioningSettings.layer)), (transport) =>
    Layer.mergeAll(
      PostgresAdapters,
      transport._tag === "Local" ? LocalMailer : SmtpMailer(transport.settings),
      LocalMailArchive,
      OutboxRelay("provisioning", JetStreamPublisher("provisioning").pipe(Layer.provide(NatsConfig.layer))),
      ProvisioningSettings.layer,
      ErrorsUrl.layer,
      NatsConfig.layer
    ).pipe(Layer.provideMerge(InternalSecret.layer), Layer.provideMerge(ProvisioningMigrationsLive), Layer.provideMerge(PgLive)))
)

runService("provisioning", Infra, [...servers(databaseReady), SubscriptionDisabledListenerLive])
