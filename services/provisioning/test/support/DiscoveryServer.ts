import { Effect } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

/**
 * An OpenID Provider's discovery document on loopback, as the provider would serve it; `document`
 * is called with the issuer (this server's address) so that a test can make it lie.
 */
export const discoveryServer = (document: (issuer: string) => Record<string, unknown>) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ readonly issuer: string; readonly close: () => void }>((resolve) => {
        const server = createServer((request, response) => {
          const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
          if (request.url !== "/.well-known/openid-configuration") return void response.writeHead(404).end()
          response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(document(issuer)))
        })
        server.listen(0, "127.0.0.1", () =>
          resolve({ issuer: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() }))
      })),
    ({ close }) => Effect.sync(close)
  )

/** What a code-flow provider publishes: the endpoints, code with PKCE S256, id tokens signed with RS256. */
export const providerDocument = (issuer: string): Record<string, unknown> => ({
  issuer,
  authorization_endpoint: `${issuer}/auth`,
  token_endpoint: `${issuer}/token`,
  jwks_uri: `${issuer}/jwks`,
  response_types_supported: ["code"],
  subject_types_supported: ["public"],
  id_token_signing_alg_values_supported: ["RS256"],
  code_challenge_methods_supported: ["S256"]
})
