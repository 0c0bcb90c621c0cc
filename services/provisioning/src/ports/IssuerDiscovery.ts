import { Context, Data, type Effect } from "effect"

/** Why an issuer cannot be used: its discovery document is missing, unreadable or not for a code flow we accept. */
export class IssuerRefused extends Data.TaggedError("IssuerRefused")<{ readonly reason: string }> {}

/** What the sign-in needs of a provider, read from its OpenID Connect discovery document. */
export interface IssuerMetadata {
  readonly issuer: string
  readonly authorizationEndpoint: string
  readonly tokenEndpoint: string
  readonly jwksUri: string
}

/** Reads an OpenID Provider's discovery document (`<issuer>/.well-known/openid-configuration`). */
export interface IssuerDiscoveryShape {
  /** `allowHttp` only for an issuer on a loopback address, where the settings allow it. */
  readonly discover: (issuer: URL, options: { readonly allowHttp: boolean }) => Effect.Effect<IssuerMetadata, IssuerRefused>
}

export class IssuerDiscovery extends Context.Service<IssuerDiscovery, IssuerDiscoveryShape>()("@portfolio/provisioning/IssuerDiscovery") {}
