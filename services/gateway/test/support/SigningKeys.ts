import { generateKeyPairSync } from "node:crypto"
import type { SigningJwk } from "../../src/Config.js"

/** A fresh private signing key as `OAUTH_SIGNING_KEYS` holds one: P-256 (ES256) or Ed25519 (EdDSA). */
export const newSigningKey = (kid: string, kind: "ES256" | "EdDSA" = "ES256"): SigningJwk => {
  if (kind === "ES256") {
    const jwk = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ format: "jwk" })
    return { kid, kty: "EC", crv: "P-256", x: jwk.x!, y: jwk.y!, d: jwk.d! }
  }
  const jwk = generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" })
  return { kid, kty: "OKP", crv: "Ed25519", x: jwk.x!, d: jwk.d! }
}

/** The key every in-process gateway of the tests signs with, unless a case gives its own. */
export const TestSigningKey = newSigningKey("test-key-1")
