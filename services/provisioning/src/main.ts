import { SqlClient } from "@effect/sql"
import { ErrorsUrl, InternalSecret, PgLive, runService } from "@portfolio/platform"
import { Effect, Layer, Option } from "effect"
import { servers } from "./http/Servers.js"
import { LocalMailArchive, LocalMailer } from "./mail/LocalMailer.js"
import { SmtpMailer, smtpSettings } from "./mail/SmtpMailer.js"
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

// Without SMTP_URL, mail stays on this machine (log and provisioning.outbound_mail) for local use.
const MailerLive = Layer.unwrapEffect(
  Effect.map(smtpSettings, Option.match({ onNone: () => LocalMailer, onSome: SmtpMailer }))
).pipe(Layer.provide(ProvisioningSettings.layer))

const Adapters = Layer.mergeAll(
  TenantRepositoryPg,
  MemberRepositoryPg,
  InvitationRepositoryPg,
  IdentityProviderPg,
  EventOutboxPg,
  UnitOfWorkPg,
  MailerLive,
  LocalMailArchive
)

const Infra = Layer.mergeAll(
  Adapters,
  outboxRelayLayer(JetStreamPublisherLive),
  ProvisioningSettings.layer,
  InternalSecret.layer,
  ErrorsUrl.layer
).pipe(Layer.provideMerge(ProvisioningMigrationsLive), Layer.provideMerge(PgLive))

const ready = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT 1`)

runService("provisioning", Infra, servers(ready))
