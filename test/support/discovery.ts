import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

/**
 * A tenant's identity provider as far as setting a single sign-on connection needs it: its
 * discovery document on loopback (code flow, asymmetric id tokens), for the suites that set a
 * connection without signing anyone in (test/support/OpenIdProvider.ts runs a whole provider).
 */
export const startDiscoveryDocument = async (): Promise<{ readonly issuer: string; readonly close: () => void }> => {
  let issuer = ""
  const server = createServer((request, response) => {
    if (request.url !== "/.well-known/openid-configuration") return void response.writeHead(404).end()
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({
      issuer,
      authorization_endpoint: `${issuer}/auth`,
      token_endpoint: `${issuer}/token`,
      jwks_uri: `${issuer}/jwks`,
      response_types_supported: ["code"],
      id_token_signing_alg_values_supported: ["ES256", "RS256"]
    }))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { issuer, close: () => server.close() }
}
