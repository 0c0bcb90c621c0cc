import { Config, Effect, Redacted } from "effect"
import { invalidSetting } from "./Settings.js"
import { createHash } from "node:crypto"

/**
 * The identity of one deployment: a hash of its database's host, port and name (never the
 * credentials). Replicas of a service share their database and so this id; another deployment on
 * the same NATS server (a staging system, a second local system, parallel test runs) has another.
 * Names shared through NATS (durable consumers, key prefixes) carry it so that deployments never
 * take each other's messages or count each other's requests.
 */
export const deploymentIdOf = (databaseUrl: string): string => {
  const url = new URL(databaseUrl)
  const host = (url.hostname === "" ? url.searchParams.get("host") ?? "" : url.hostname).toLowerCase()
  const identity = `${host}:${url.port === "" ? "5432" : url.port}${decodeURIComponent(url.pathname)}`
  return createHash("sha256").update(identity, "utf8").digest("hex").slice(0, 16)
}

/** This process's deployment id, from `DATABASE_URL`. */
export const DeploymentIdConfig: Config.Config<string> = Config.Redacted("DATABASE_URL").pipe(
  Config.mapEffect((url) =>
    Effect.try({
      try: () => deploymentIdOf(Redacted.value(url)),
      catch: () => invalidSetting("DATABASE_URL", "must be a postgres:// URL")
    })
  )
)
