import { ErrorsUrl, runService } from "@portfolio/platform/http"
import { EventPublisherJs, NatsSettings, OutboxRelayLive } from "@portfolio/platform/nats"
import { InternalSecret } from "@portfolio/platform/security"
import { databaseReady, PgLive } from "@portfolio/platform/sql"
import { Effect, Layer } from "effect"
import { servers } from "./adapters/http/Servers.js"
import { IssuerDiscoveryOpenId } from "./adapters/openid/IssuerDiscoveryOpenId.js"
import { SsoRelyingPartyOpenId } from "./adapters/openid/SsoRelyingPartyOpenId.js"
import { MailerSmtp } from "./adapters/mail/MailerSmtp.js"
import { SubscriptionDisabledConsumerLive } from "./adapters/nats/SubscriptionDisabledConsumer.js"
import { MailArchivePg } from "./adapters/postgres/MailArchivePg.js"
import { MailerPg } from "./adapters/postgres/MailerPg.js"
import { MigrationsLive } from "./adapters/postgres/Migrations.js"
import { PruningLive } from "./adapters/postgres/Pruning.js"
import { ResealClientSecretsLive } from "./adapters/postgres/ResealClientSecrets.js"
import { PgAdaptersLive } from "./adapters/postgres/PgAdapters.js"
import { ClientSecretSealer } from "./adapters/postgres/SsoConnectionRepositoryPg.js"
import { mailTransport, ProvisioningSettings } from "./Config.js"

// The mail settings are read before anything connects, so that a missing SMTP_URL stops the
// process with its own message rather than behind a database or NATS failure.
const Infra = Layer.unwrap(
  Effect.map(mailTransport.pipe(Effect.provide(ProvisioningSettings.layer)), (transport) =>
    Layer.mergeAll(
      PgAdaptersLive,
      ResealClientSecretsLive,
      IssuerDiscoveryOpenId,
      SsoRelyingPartyOpenId,
      transport._tag === "Local" ? MailerPg : MailerSmtp(transport.settings),
      MailArchivePg,
      OutboxRelayLive("provisioning", EventPublisherJs("provisioning").pipe(Layer.provide(NatsSettings.layer))),
      ProvisioningSettings.layer,
      ErrorsUrl.layer,
      NatsSettings.layer
    ).pipe(Layer.provideMerge(ClientSecretSealer.layer), Layer.provideMerge(InternalSecret.layer), Layer.provideMerge(MigrationsLive), Layer.provideMerge(PgLive)))
)

runService("provisioning", Infra, [...servers(databaseReady), SubscriptionDisabledConsumerLive, PruningLive])
