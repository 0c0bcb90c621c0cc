import { Config, Context, Effect, Layer } from "effect"
import { connect, type ConnectionOptions, type JetStreamManager, type NatsConnection } from "nats"

/**
 * Where the platform's NATS server is, from `NATS_URL` (default `nats://127.0.0.1:4222`, the local
 * machine's). Every process that speaks to NATS reads it here; the `nats` 2.x client stays behind
 * the adapters that use this module, so that a move to `@nats-io/*` 3.x touches few files.
 */
export interface NatsSettings {
  readonly servers: string
}

export class NatsConfig extends Context.Tag("@portfolio/platform/NatsConfig")<NatsConfig, NatsSettings>() {
  static readonly config: Config.Config<NatsSettings> = Config.all({
    servers: Config.string("NATS_URL").pipe(Config.withDefault("nats://127.0.0.1:4222"))
  })
  static readonly layer = Layer.effect(NatsConfig, NatsConfig.config)
}

/**
 * A connection for the life of the scope, reconnecting forever (a service keeps serving while NATS
 * is away). Closing the scope drains it, so that what was published or acknowledged is flushed;
 * `close: "close"` skips the drain for connections that only wait on replies.
 */
export const natsConnection = (
  settings: NatsSettings,
  options: Omit<ConnectionOptions, "servers"> & { readonly name: string; readonly close?: "drain" | "close" }
) => {
  const { close = "drain", ...rest } = options
  return Effect.acquireRelease(
    Effect.tryPromise(() => connect({ maxReconnectAttempts: -1, ...rest, servers: settings.servers })),
    (connection) => Effect.promise(() => (close === "drain" ? connection.drain() : connection.close()).catch(() => undefined))
  )
}

/** The platform's one event stream: every event subject is `events.<service>.<kind>`. */
export const EventsStream = { name: "EVENTS", subjects: ["events.>"] } as const

/**
 * The name of the stream that captures `subject`, creating the `EVENTS` stream when none does yet
 * (publishers and consumers may start in either order). An operator may have created the stream
 * beforehand with other settings (replicas, limits): it is then used as it is.
 */
export const ensureEventsStream = (jsm: JetStreamManager, subject: string): Promise<string> =>
  jsm.streams.find(subject).catch(() => undefined).then(async (found) =>
    found ?? (await jsm.streams.add({ name: EventsStream.name, subjects: [...EventsStream.subjects] })).config.name
  )

export type { NatsConnection }
