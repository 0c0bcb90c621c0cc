import { Config, Context, Effect, Result, Layer, Option, Redacted } from "effect"
import { invalidSetting } from "../config/Settings.js"
import type { JetStreamManager } from "@nats-io/jetstream"
import {
  type Authenticator,
  connect,
  type ConnectionOptions,
  credsAuthenticator,
  type NatsConnection,
  nkeyAuthenticator,
  type TlsOptions,
  tokenAuthenticator,
  usernamePasswordAuthenticator
} from "@nats-io/transport-node"
import { readFileSync } from "node:fs"

/**
 * How a process proves itself to NATS: at most one method. Passwords and tokens stay `Redacted`
 * (a settings object that reaches a log line shows `<redacted>`); a creds or seed file is held by
 * its path only and read when the connection authenticates.
 */
export type NatsAuth =
  | { readonly method: "none" }
  | { readonly method: "user-password"; readonly user: string; readonly password: Redacted.Redacted }
  | { readonly method: "token"; readonly token: Redacted.Redacted }
  | { readonly method: "creds-file"; readonly path: string }
  | { readonly method: "nkey-seed-file"; readonly path: string }

/** Files of a TLS connection; any of them set makes the connection require TLS. */
export interface NatsTls {
  readonly caFile?: string
  readonly certFile?: string
  readonly keyFile?: string
}

/**
 * Where the platform's NATS server is and how to authenticate to it. Every process that speaks to
 * NATS reads it here; the client (`@nats-io/*` 3.x) stays behind the adapters that use this module.
 */
export interface NatsSettingsShape {
  /** `NATS_URL`: one server, or a cluster's several separated by commas. */
  readonly servers: string
  readonly auth: NatsAuth
  readonly tls: NatsTls | undefined
  /**
   * `NATS_REPLICAS`: how many copies JetStream keeps of each stream and key-value bucket the
   * platform creates (1 to 5; 1 by default, for one server; 3 on a cluster of three or more, so
   * that a server lost keeps the events, the wake-ups and the rate limits). A stream an operator
   * created beforehand is used as it is.
   */
  readonly replicas: number
}

/** Settings without credentials or TLS: a local development server (one replica), and tests. */
export const plainNats = (servers: string, replicas = 1): NatsSettingsShape => ({ servers, auth: { method: "none" }, tls: undefined, replicas })

const invalid = (name: string, message: string) => Result.fail(invalidSetting(name, message))

// Kubernetes and shells leave a variable set but empty when a value is optional: that means unset.
const optionalString = (name: string) => Config.option(Config.String(name)).pipe(Config.map(Option.filter((value) => value.trim() !== "")))
const optionalSecret = (name: string) =>
  Config.option(Config.Redacted(name)).pipe(Config.map(Option.filter((value) => Redacted.value(value) !== "")))

const readable = (name: string, path: string): Result.Result<Uint8Array, Config.ConfigError> => {
  try {
    return Result.succeed(readFileSync(path))
  } catch (error) {
    return invalid(name, `cannot read '${path}' (${(error as { code?: string }).code ?? String(error)})`)
  }
}

/** Signs a challenge as the server will ask at connection, so that a malformed file is refused at start. */
const signs = (name: string, authenticator: Authenticator, what: string) => {
  try {
    const auth = authenticator("start-up check") as { nkey?: string }
    return auth.nkey?.startsWith("U") === true ? Result.succeed(undefined) : invalid(name, `does not hold ${what} (its key is not a user key)`)
  } catch {
    return invalid(name, `does not hold ${what}`)
  }
}

const trimmed = (bytes: Uint8Array) => new TextEncoder().encode(new TextDecoder().decode(bytes).trim())

const MethodVariables = "NATS_USER with NATS_PASSWORD, NATS_TOKEN, NATS_CREDS_FILE or NATS_NKEY_SEED_FILE"

const natsAuth = (c: {
  readonly user: Option.Option<string>
  readonly password: Option.Option<Redacted.Redacted>
  readonly token: Option.Option<Redacted.Redacted>
  readonly credsFile: Option.Option<string>
  readonly nkeySeedFile: Option.Option<string>
}): Result.Result<NatsAuth, Config.ConfigError> => {
  const chosen = [
    Option.isSome(c.user) || Option.isSome(c.password) ? "NATS_USER/NATS_PASSWORD" : undefined,
    Option.isSome(c.token) ? "NATS_TOKEN" : undefined,
    Option.isSome(c.credsFile) ? "NATS_CREDS_FILE" : undefined,
    Option.isSome(c.nkeySeedFile) ? "NATS_NKEY_SEED_FILE" : undefined
  ].filter((name) => name !== undefined)
  if (chosen.length > 1) {
    return invalid(chosen[1]!.split("/")[0]!, `is set beside ${chosen[0]}: choose one NATS authentication method (${MethodVariables})`)
  }
  if (Option.isSome(c.user) !== Option.isSome(c.password)) {
    return Option.isSome(c.user) ? invalid("NATS_PASSWORD", "is required with NATS_USER") : invalid("NATS_USER", "is required with NATS_PASSWORD")
  }
  if (Option.isSome(c.user) && Option.isSome(c.password)) return Result.succeed({ method: "user-password", user: c.user.value, password: c.password.value })
  if (Option.isSome(c.token)) return Result.succeed({ method: "token", token: c.token.value })
  if (Option.isSome(c.credsFile)) {
    const path = c.credsFile.value
    return readable("NATS_CREDS_FILE", path).pipe(
      Result.flatMap((bytes) => signs("NATS_CREDS_FILE", credsAuthenticator(bytes), "NATS credentials (a user JWT and its NKey seed)")),
      Result.map((): NatsAuth => ({ method: "creds-file", path }))
    )
  }
  if (Option.isSome(c.nkeySeedFile)) {
    const path = c.nkeySeedFile.value
    return readable("NATS_NKEY_SEED_FILE", path).pipe(
      Result.flatMap((bytes) => signs("NATS_NKEY_SEED_FILE", nkeyAuthenticator(trimmed(bytes)), "a user NKey seed (SU...)")),
      Result.map((): NatsAuth => ({ method: "nkey-seed-file", path }))
    )
  }
  return Result.succeed({ method: "none" })
}

const natsTls = (c: {
  readonly caFile: Option.Option<string>
  readonly certFile: Option.Option<string>
  readonly keyFile: Option.Option<string>
}): Result.Result<NatsTls | undefined, Config.ConfigError> => {
  if (Option.isSome(c.certFile) !== Option.isSome(c.keyFile)) {
    return Option.isSome(c.certFile)
      ? invalid("NATS_TLS_KEY_FILE", "is required with NATS_TLS_CERT_FILE (a client certificate needs its key)")
      : invalid("NATS_TLS_CERT_FILE", "is required with NATS_TLS_KEY_FILE (a client key needs its certificate)")
  }
  const files = [["NATS_TLS_CA_FILE", c.caFile], ["NATS_TLS_CERT_FILE", c.certFile], ["NATS_TLS_KEY_FILE", c.keyFile]] as const
  for (const [name, path] of files) {
    if (Option.isSome(path)) {
      const read = readable(name, path.value)
      if (Result.isFailure(read)) return Result.fail(read.failure)
    }
  }
  if (files.every(([, path]) => Option.isNone(path))) return Result.succeed(undefined)
  return Result.succeed({
    ...Option.match(c.caFile, { onNone: () => ({}), onSome: (caFile) => ({ caFile }) }),
    ...Option.match(c.certFile, { onNone: () => ({}), onSome: (certFile) => ({ certFile }) }),
    ...Option.match(c.keyFile, { onNone: () => ({}), onSome: (keyFile) => ({ keyFile }) })
  })
}

/** NATS_URL's servers: the client takes a list, and reads a comma-separated string as the last URL of it. */
const serverList = (servers: string) => servers.split(",").map((server) => server.trim()).filter((server) => server !== "")

const natsReplicas = (value: Option.Option<string>): Result.Result<number, Config.ConfigError> => {
  if (Option.isNone(value)) return Result.succeed(1)
  const replicas = Number(value.value.trim())
  return Number.isInteger(replicas) && replicas >= 1 && replicas <= 5
    ? Result.succeed(replicas)
    : invalid("NATS_REPLICAS", "must be from 1 to 5 (JetStream keeps at most 5 copies)")
}

/** `scheme://user:password@host`: credentials that would be written wherever the URL is. */
const hasCredentials = (servers: string) => servers.split(",").some((server) => /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(server.trim()))

/**
 * `NATS_URL` (default `nats://127.0.0.1:4222`, the local machine's), at most one authentication
 * method (`NATS_USER` with `NATS_PASSWORD`, `NATS_TOKEN`, `NATS_CREDS_FILE`, `NATS_NKEY_SEED_FILE`)
 * and optionally TLS (`NATS_TLS_CA_FILE`, `NATS_TLS_CERT_FILE` with `NATS_TLS_KEY_FILE`), validated
 * at start: files readable, a creds or seed file able to sign, each refusal naming its variable.
 */
export const natsSettingsConfig: Config.Config<NatsSettingsShape> = Config.all({
  servers: Config.String("NATS_URL").pipe(Config.withDefault("nats://127.0.0.1:4222")),
  user: optionalString("NATS_USER"),
  password: optionalSecret("NATS_PASSWORD"),
  token: optionalSecret("NATS_TOKEN"),
  credsFile: optionalString("NATS_CREDS_FILE"),
  nkeySeedFile: optionalString("NATS_NKEY_SEED_FILE"),
  caFile: optionalString("NATS_TLS_CA_FILE"),
  certFile: optionalString("NATS_TLS_CERT_FILE"),
  keyFile: optionalString("NATS_TLS_KEY_FILE"),
  replicas: optionalString("NATS_REPLICAS")
}).pipe(
  Config.mapEffect((c) =>
    Effect.fromResult(
      hasCredentials(c.servers)
        ? invalid("NATS_URL", "carries credentials: give them in NATS_USER and NATS_PASSWORD, or NATS_TOKEN, which are never logged")
        : serverList(c.servers).length === 0
        ? invalid("NATS_URL", "names no server: one URL, or a cluster's several separated by commas")
        : Result.all({ servers: Result.succeed(c.servers), auth: natsAuth(c), tls: natsTls(c), replicas: natsReplicas(c.replicas) })
    )
  )
)

export class NatsSettings extends Context.Service<NatsSettings, NatsSettingsShape>()("@portfolio/platform/NatsSettings") {
  static readonly config: Config.Config<NatsSettingsShape> = natsSettingsConfig
  static readonly layer = Layer.effect(NatsSettings, NatsSettings.config)
}

/**
 * The file's current content, read at each authentication: a mounted Kubernetes Secret is
 * replaced in place on rotation, and a reconnection then presents the new credentials without a
 * restart. A file missing for a moment (the swap is not atomic for every mount) falls back to the
 * last content read.
 */
const latestContent = (path: string, transform: (bytes: Uint8Array) => Uint8Array = (bytes) => bytes) => {
  let last: Uint8Array | undefined
  return () => {
    try {
      last = transform(readFileSync(path))
    } catch (error) {
      if (last === undefined) throw error
    }
    return last
  }
}

const authenticatorOf = (auth: NatsAuth): Authenticator | undefined => {
  switch (auth.method) {
    case "none":
      return undefined
    case "user-password":
      return usernamePasswordAuthenticator(auth.user, () => Redacted.value(auth.password))
    case "token":
      return tokenAuthenticator(() => Redacted.value(auth.token))
    case "creds-file":
      return credsAuthenticator(latestContent(auth.path))
    case "nkey-seed-file":
      return nkeyAuthenticator(latestContent(auth.path, trimmed))
  }
}

/** The client options that `settings` adds to a connection: its servers (a list), credentials and TLS. */
export const natsConnectionOptions = (settings: NatsSettingsShape): ConnectionOptions => {
  const authenticator = authenticatorOf(settings.auth)
  const tls: TlsOptions | undefined = settings.tls === undefined ? undefined : { ...settings.tls }
  return { servers: serverList(settings.servers), ...(authenticator === undefined ? {} : { authenticator }), ...(tls === undefined ? {} : { tls }) }
}

/**
 * A connection for the life of the scope, reconnecting forever (a service keeps serving while NATS
 * is away), to any server of the list, every 2 s with up to 1 s of jitter (the client's default is
 * 0.1 s), so that the replicas of every service a restarted server dropped do not all come back in
 * the same instant. Closing the scope drains it, so that what was published or acknowledged is flushed;
 * `close: "close"` skips the drain for connections that only wait on replies. Server, credentials
 * and TLS come from `settings` only, so that no connection of any service can go without them.
 *
 * `noAsyncTraces`: otherwise the client captures a stack (an error and a timer's error made in
 * advance) for every request and JetStream publish, in case it fails; over a run of the scale
 * benchmark that was 1.6 s of the referential's CPU, for stacks that the logs never print.
 */
export const natsConnection = (
  settings: NatsSettingsShape,
  options: Omit<ConnectionOptions, "servers" | "authenticator" | "user" | "pass" | "token" | "tls"> & {
    readonly name: string
    readonly close?: "drain" | "close"
  }
) => {
  const { close = "drain", ...rest } = options
  return Effect.acquireRelease(
    Effect.tryPromise(() => connect({ maxReconnectAttempts: -1, reconnectJitter: 1_000, noAsyncTraces: true, ...rest, ...natsConnectionOptions(settings) })),
    // A drain waits for the server; a connection that is reconnecting would hold the scope forever.
    (connection) =>
      Effect.promise(() => (close === "drain" ? connection.drain() : connection.close()).catch(() => undefined)).pipe(
        Effect.interruptible,
        Effect.timeout("5 seconds"),
        Effect.catch(() => Effect.promise(() => connection.close().catch(() => undefined)))
      )
  )
}

/** The platform's one event stream: every event subject is `events.<service>.<kind>`. */
const EventsStream = { name: "EVENTS", subjects: ["events.>"] } as const

/**
 * The name of the stream that captures `subject`, creating the `EVENTS` stream, at `replicas`
 * copies, when none does yet (publishers and consumers may start in either order). An operator may
 * have created the stream beforehand with other settings (replicas, limits): it is then used as it is.
 */
export const ensureEventsStream = (jsm: JetStreamManager, subject: string, replicas = 1): Promise<string> =>
  jsm.streams.find(subject).catch(() => undefined).then(async (found) =>
    found ?? (await jsm.streams.add({ name: EventsStream.name, subjects: [...EventsStream.subjects], num_replicas: replicas })).config.name
  )

export type { NatsConnection }
