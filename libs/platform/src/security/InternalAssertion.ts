import { Config, Context, Effect, type Result, Layer, Redacted } from "effect"
import { makeExpiringLru } from "../cache/ExpiringLru.js"
import { invalidSetting } from "../config/Settings.js"
import { type AssertionFailure, type AssertionTarget, openAssertion, type OpenedAssertion, verificationKeys } from "./AssertionToken.js"

export * from "./AssertionToken.js"

/**
 * The signed statement by which the gateway (or the operator CLI) tells a service who is calling,
 * for one request only. Rules and reasons: docs/security.md, "The internal assertion".
 */
export const AssertionHeader = "x-portfolio-assertion"

/**
 * How many used assertion ids a process remembers. An id only matters until its assertion expires
 * (30 s), so this covers over 3,000 verified requests a second per process; past that the oldest,
 * those nearest their expiry, are forgotten first.
 */
const RememberedAssertions = 100_000

export interface AssertionVerifierShape {
  /** Form, signature, lifetime, audience, method and target; the body and the single use are checked apart. */
  readonly open: (header: string | undefined, request: AssertionTarget, nowMs: number) => Result.Result<OpenedAssertion, AssertionFailure>
  /** Whether the assertion is used for the first time before its expiry; from now on it is used. */
  readonly firstUse: (assertion: OpenedAssertion, nowMs: number) => boolean
}

/** A process's verifier: its secrets and its memory of used assertions, shared by all its ports. */
export class AssertionVerifier extends Context.Service<AssertionVerifier, AssertionVerifierShape>()("@portfolio/platform/AssertionVerifier") {}

export const makeAssertionVerifier = (secrets: ReadonlyArray<string>, capacity = RememberedAssertions): AssertionVerifierShape => {
  const keys = verificationKeys(secrets)
  // Deadlines are checked against the caller's clock, so that a test clock drives expiry.
  const used = makeExpiringLru<true>(capacity)
  return {
    open: (header, request, nowMs) => openAssertion(keys, header, request, nowMs),
    firstUse: (assertion, nowMs) => {
      if (used.get(assertion.id, nowMs) !== undefined) return false
      used.set(assertion.id, true, assertion.expiresAtMs)
      return true
    }
  }
}

const SecretMinLength = 32

const secretSetting = Config.Redacted("INTERNAL_SECRET").pipe(
  Config.map(Redacted.value),
  Config.mapEffect((s) =>
    s.length >= SecretMinLength
      ? Effect.succeed(s)
      : Effect.fail(invalidSetting("INTERNAL_SECRET", `INTERNAL_SECRET must be at least ${SecretMinLength} characters`))
  )
)

// Empty counts as unset: a deployment template that always renders the variable must not stop the service.
const previousSetting = Config.Redacted("INTERNAL_SECRET_PREVIOUS").pipe(
  Config.withDefault(Redacted.make("")),
  Config.map(Redacted.value),
  Config.mapEffect((s) =>
    s === "" || s.length >= SecretMinLength
      ? Effect.succeed(s)
      : Effect.fail(invalidSetting("INTERNAL_SECRET_PREVIOUS", `INTERNAL_SECRET_PREVIOUS must be at least ${SecretMinLength} characters when set`))
  ),
  Config.map((s) => (s === "" ? undefined : s))
)

/**
 * `INTERNAL_SECRET` and, while a rotation is under way, `INTERNAL_SECRET_PREVIOUS`, validated: also
 * read by what derives other keys from them (the webhook dispatcher's sealed secrets).
 */
export const internalSecretSettings = Config.all({ current: secretSetting, previous: previousSetting })

/**
 * The internal secret that signs assertions (`INTERNAL_SECRET`, at least 32 characters). Its
 * layers also provide the `AssertionVerifier`, which accepts this secret and, while a rotation is
 * under way, `INTERNAL_SECRET_PREVIOUS`.
 */
export class InternalSecret extends Context.Service<InternalSecret, string>()("@portfolio/platform/InternalSecret") {
  static readonly fixed = (current: string, previous?: string) =>
    Layer.merge(
      Layer.succeed(InternalSecret, current),
      Layer.sync(AssertionVerifier, () => makeAssertionVerifier(previous === undefined ? [current] : [current, previous]))
    )

  static readonly layer = Layer.unwrap(
    Effect.map(
      internalSecretSettings,
      ({ current, previous }) => InternalSecret.fixed(current, previous)
    )
  )
}
