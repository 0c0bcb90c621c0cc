import { internalSecretSettings, openSealed, sealBytes, sealingKey } from "@portfolio/platform/security"
import { Context, Effect, Layer, Option } from "effect"

/**
 * A subscription's signing secret is shown once and kept sealed (AES-256-GCM, libs/platform/src/security/Sealing.ts)
 * under a key derived from INTERNAL_SECRET: the dispatcher must sign with the secret itself, so a
 * hash will not do, and a database dump alone must not be enough to forge deliveries
 * (docs/security.md#webhooks).
 */
export const SigningSecretLabel = "portfolio/webhook-dispatcher/signing_secret/v1"

export const signingSecretSealKey = (internalSecret: string): Buffer => sealingKey(internalSecret, SigningSecretLabel)

// The subscription id as associated data: a sealed secret copied onto another subscription's row does not open there.
const boundTo = (subscriptionId: string) => Buffer.from(subscriptionId, "utf8")

export interface SecretSealerShape {
  /** Under the key of INTERNAL_SECRET. */
  readonly sealSecret: (subscriptionId: string, secret: string) => Effect.Effect<Buffer>
  /** Tries the key of INTERNAL_SECRET, then that of INTERNAL_SECRET_PREVIOUS; None when neither opens it for this subscription. */
  readonly openSecret: (subscriptionId: string, sealed: Uint8Array) => Option.Option<string>
  /**
   * The secret sealed anew under the current key when only the previous key opens it, else None:
   * what must be rewritten before INTERNAL_SECRET_PREVIOUS is unset, or those secrets are lost.
   */
  readonly reseal: (subscriptionId: string, sealed: Uint8Array) => Effect.Effect<Option.Option<Buffer>>
}

export const makeSecretSealer = (current: string, previous?: string): SecretSealerShape => {
  // HKDF once per process, not once per delivery.
  const currentKey = signingSecretSealKey(current)
  const previousKey = previous === undefined ? undefined : signingSecretSealKey(previous)
  const openWith = (key: Buffer | undefined, subscriptionId: string, sealed: Uint8Array) =>
    key === undefined ? Option.none() : Option.map(openSealed(key, boundTo(subscriptionId), sealed), (clear) => clear.toString("utf8"))
  const sealSecret = (subscriptionId: string, secret: string) => sealBytes(currentKey, boundTo(subscriptionId), Buffer.from(secret, "utf8"))
  return {
    sealSecret,
    openSecret: (subscriptionId, sealed) =>
      Option.orElse(openWith(currentKey, subscriptionId, sealed), () => openWith(previousKey, subscriptionId, sealed)),
    reseal: (subscriptionId, sealed) =>
      Option.isSome(openWith(currentKey, subscriptionId, sealed))
        ? Effect.succeed(Option.none())
        : Option.match(openWith(previousKey, subscriptionId, sealed), {
          onNone: () => Effect.succeed(Option.none()),
          onSome: (secret) => Effect.map(sealSecret(subscriptionId, secret), Option.some)
        })
  }
}

/** Seals and opens the subscriptions' signing secrets with the keys of the internal secrets. */
export class SecretSealer extends Context.Tag("@portfolio/webhook-dispatcher/SecretSealer")<SecretSealer, SecretSealerShape>() {
  static readonly fixed = (current: string, previous?: string) => Layer.sync(SecretSealer, () => makeSecretSealer(current, previous))

  /** From INTERNAL_SECRET and INTERNAL_SECRET_PREVIOUS, read and validated as the assertions read them. */
  static readonly layer = Layer.unwrapEffect(
    Effect.map(internalSecretSettings, ({ current, previous }) => SecretSealer.fixed(current, previous))
  )
}
