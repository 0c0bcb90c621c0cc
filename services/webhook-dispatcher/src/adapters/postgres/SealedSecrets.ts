import { internalSecretSettings, makeSecretSealer as sealerFor, sealingKey, type SecretSealerShape } from "@portfolio/platform/security"
import { Context, Effect, Layer } from "effect"

/**
 * A subscription's signing secret is shown once and kept sealed (AES-256-GCM, libs/platform/src/security/Sealing.ts)
 * under a key derived from INTERNAL_SECRET, bound to the subscription's id: the dispatcher must sign
 * with the secret itself, so a hash will not do, and a database dump alone must not be enough to
 * forge deliveries (docs/security.md#webhooks).
 */
export const SigningSecretLabel = "portfolio/webhook-dispatcher/signing_secret/v1"

export type { SecretSealerShape }

export const signingSecretSealKey = (internalSecret: string): Buffer => sealingKey(internalSecret, SigningSecretLabel)

export const makeSecretSealer = (current: string, previous?: string): SecretSealerShape => sealerFor(SigningSecretLabel, current, previous)

/** Seals and opens the subscriptions' signing secrets with the keys of the internal secrets. */
export class SecretSealer extends Context.Service<SecretSealer, SecretSealerShape>()("@portfolio/webhook-dispatcher/SecretSealer") {
  static readonly fixed = (current: string, previous?: string) => Layer.sync(SecretSealer, () => makeSecretSealer(current, previous))

  /** From INTERNAL_SECRET and INTERNAL_SECRET_PREVIOUS, read and validated as the assertions read them. */
  static readonly layer = Layer.unwrap(
    Effect.map(internalSecretSettings, ({ current, previous }) => SecretSealer.fixed(current, previous))
  )
}
