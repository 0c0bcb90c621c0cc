import { SqlClient } from "@effect/sql"
import { ErrorsUrl, InternalSecret, PgLive, runService } from "@portfolio/platform"
import type { Mailer } from "@portfolio/domain/ports/provisioning"
import { Effect, Layer } from "effect"
import { servers } from "./http/Servers.js"
import { LocalMailArchive, LocalMailer } from "./mail/LocalMailer.js"
import { mailTransport, SmtpMailer } from "./mail/SmtpMailer.js"
import { JetStreamPublisherLive } from "./nats/JetStreamPublisher.js"
import { EventOutboxPg } from "./postgres/EventOutboxPg.js"
import { IdentityProviderPg } from "./postgres/IdentityProviderPg.js"
import { InvitationRepositoryPg } from "./postgres/InvitationRepositoryPg.js"
import { MemberRepositoryPg } from "./postgres/MemberRepositoryPg.js"
import { ProvisioningMigrationsLive } from "./postgres/Migrations.js"
import { outboxRelayLayer } from "./postgres/OutboxRelay.js"
import { TenantRepositoryPg } from "./postgres/TenantRepositoryPg.js"
import { UnitOfWorkPg } from "./postgres/UnitOfWorkPg.js"
import { ProvisioningSettings } from "./Settings.js"

const adapters = (mailer: Layer.Layer<Mailer, never, SqlClient.SqlClient>) =>
  Layer.mergeAll(
    TenantRepositoryPg,
    MemberRepositoryPg,
    InvitationRepositoryPg,
    IdentityProviderPg,
    EventOutboxPg,
    UnitOfWorkPg,
    mailer,
    LocalMailArchive
  )

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
