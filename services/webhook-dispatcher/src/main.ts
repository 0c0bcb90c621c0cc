import { ErrorsUrl, runService } from "@portfolio/platform/http"
import { EventPublisherJs, NatsSettings, OutboxRelayLive } from "@portfolio/platform/nats"
import { InternalSecret } from "@portfolio/platform/security"
import { databaseReady, PgLive } from "@portfolio/platform/sql"
import { Effect, Layer } from "effect"
import { servers } from "./adapters/http/Servers.js"
import { NatsWorkersLive } from "./adapters/nats/NatsWorkers.js"
import { JetStreamLink, RetryWakeupsJs } from "./adapters/nats/RetryWakeupsJs.js"
import { MigrationsLive, Schema } from "./adapters/postgres/Migrations.js"
import { OverdueSweeperLive } from "./adapters/postgres/OverdueSweeper.js"
import { PgAdaptersLive } from "./adapters/postgres/PgAdapters.js"
import { PruningLive } from "./adapters/postgres/Pruning.js"
import { ResealSecretsLive } from "./adapters/postgres/ResealSecrets.js"
import { SecretSealer } from "./adapters/postgres/SealedSecrets.js"
import { WebhookSenderUndici } from "./adapters/undici/WebhookSenderUndici.js"
import { DispatcherSettings } from "./Config.js"
import { DeliveryLanes } from "./usecases/DeliveryLanes.js"

const Sender = Layer.unwrap(
  Effect.map(DispatcherSettings, ({ allowPrivateTargets, timeoutMs }) => WebhookSenderUndici({ allowPrivateTargets, timeoutMs }))
)

const Ports = Layer.mergeAll(PgAdaptersLive, RetryWakeupsJs, Sender).pipe(
  Layer.provideMerge(JetStreamLink.layer),
  Layer.provideMerge(SecretSealer.layer)
)

const Workers = Layer.mergeAll(NatsWorkersLive, OverdueSweeperLive, PruningLive).pipe(Layer.provideMerge(DeliveryLanes.layer))

const Infra = Layer.mergeAll(
  Workers,
  ResealSecretsLive,
  OutboxRelayLive(Schema, EventPublisherJs("webhook-dispatcher").pipe(Layer.provide(NatsSettings.layer))),
  ErrorsUrl.layer
).pipe(
  Layer.provideMerge(Ports),
  Layer.provideMerge(Layer.mergeAll(DispatcherSettings.layer, NatsSettings.layer, InternalSecret.layer)),
  Layer.provideMerge(MigrationsLive),
  Layer.provideMerge(PgLive)
)

runService("webhook-dispatcher", Infra, servers(databaseReady))
