import { Effect, Option } from "effect"
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto"

/**
 * AES-256-GCM for what a service must keep at rest yet a copy of its database alone must not reveal
 * (the local mailer's magic links, the webhook signing secrets: docs/security.md). The keys come
 * from a secret the service holds already (INTERNAL_SECRET), so no new secret has to be distributed.
 */

/**
 * A 256-bit key for one use of a secret: HKDF-SHA256 (empty salt) with the use's label as info, so
 * that each use gets a key unrelated to the others' and to the assertions' signing key. Versioned
 * labels (`portfolio/<service>/<what>/v1`) let a use change its key without touching the others.
 */
export const sealingKey = (secret: string, label: string): Buffer => Buffer.from(hkdfSync("sha256", secret, "", label, 32))

const Version = 1
const IvBytes = 12
const TagBytes = 16

/**
 * `version (1 byte) | IV (12) | ciphertext | tag (16)`, with a fresh random IV per message. The
 * associated data is not stored: it binds the sealed bytes to where they belong (a row's clear
 * columns, an id), so that bytes moved elsewhere do not open.
 */
export const sealBytes = (key: Buffer, associatedData: Uint8Array, clear: Uint8Array): Effect.Effect<Buffer> =>
  Effect.sync(() => {
    const iv = randomBytes(IvBytes)
    const cipher = createCipheriv("aes-256-gcm", key, iv, { authTagLength: TagBytes }).setAAD(associatedData)
    const ciphertext = Buffer.concat([cipher.update(clear), cipher.final()])
    return Buffer.concat([Buffer.of(Version), iv, ciphertext, cipher.getAuthTag()])
  })

/** None when the bytes were sealed under another key or other associated data, altered, cut, or of another version. */
export const openSealed = (key: Buffer, associatedData: Uint8Array, sealed: Uint8Array): Option.Option<Buffer> => {
  const bytes = Buffer.from(sealed)
  if (bytes.length < 1 + IvBytes + TagBytes || bytes[0] !== Version) return Option.none()
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(1, 1 + IvBytes), { authTagLength: TagBytes })
      .setAAD(associatedData)
      .setAuthTag(bytes.subarray(bytes.length - TagBytes))
    return Option.some(Buffer.concat([decipher.update(bytes.subarray(1 + IvBytes, bytes.length - TagBytes)), decipher.final()]))
  } catch {
    // GCM refuses a wrong key or an altered byte by throwing in `final`: the bytes cannot be opened.
    return Option.none()
  }
}

/**
 * Secrets a service must use itself (a webhook's signing secret, an identity provider's client
 * secret), sealed under a key of INTERNAL_SECRET for one use (`label`), each bound to the id of
 * what it belongs to: a sealed secret copied onto another row does not open there.
 */
export interface SecretSealerShape {
  /** Under the key of INTERNAL_SECRET. */
  readonly sealSecret: (ownerId: string, secret: string) => Effect.Effect<Buffer>
  /** Tries the key of INTERNAL_SECRET, then that of INTERNAL_SECRET_PREVIOUS; None when neither opens it for this owner. */
  readonly openSecret: (ownerId: string, sealed: Uint8Array) => Option.Option<string>
  /**
   * The secret sealed anew under the current key when only the previous key opens it, else None:
   * what must be rewritten before INTERNAL_SECRET_PREVIOUS is unset, or those secrets are lost.
   */
  readonly reseal: (ownerId: string, sealed: Uint8Array) => Effect.Effect<Option.Option<Buffer>>
}

export const makeSecretSealer = (label: string, current: string, previous?: string): SecretSealerShape => {
  // HKDF once per process, not once per use.
  const currentKey = sealingKey(current, label)
  const previousKey = previous === undefined ? undefined : sealingKey(previous, label)
  const boundTo = (ownerId: string) => Buffer.from(ownerId, "utf8")
  const openWith = (key: Buffer | undefined, ownerId: string, sealed: Uint8Array) =>
    key === undefined ? Option.none() : Option.map(openSealed(key, boundTo(ownerId), sealed), (clear) => clear.toString("utf8"))
  const sealSecret = (ownerId: string, secret: string) => sealBytes(currentKey, boundTo(ownerId), Buffer.from(secret, "utf8"))
  return {
    sealSecret,
    openSecret: (ownerId, sealed) => Option.orElse(openWith(currentKey, ownerId, sealed), () => openWith(previousKey, ownerId, sealed)),
    reseal: (ownerId, sealed) =>
      Option.isSome(openWith(currentKey, ownerId, sealed))
        ? Effect.succeed(Option.none())
        : Option.match(openWith(previousKey, ownerId, sealed), {
          onNone: () => Effect.succeed(Option.none()),
          onSome: (secret) => Effect.map(sealSecret(ownerId, secret), Option.some)
        })
  }
}
