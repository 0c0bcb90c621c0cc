import { Context, type Effect, type Option } from "effect"

export interface SessionRecord {
  /** SHA-256 of the cookie's value (domain/SessionRules.ts): the value itself is never stored. */
  readonly idHash: string
  readonly userSub: string
  readonly email: string
  /** The workspace the member works in; null until they chose one among several. */
  readonly tenantId: string | null
  /** The tenant whose identity provider opened the session, which then acts in it only; null for a password's. */
  readonly ssoTenantId: string | null
  readonly csrfToken: string
  readonly createdAtMs: number
  readonly lastSeenAtMs: number
  readonly ip: string
  readonly userAgent: string
}

export interface SessionRepositoryShape {
  readonly create: (session: SessionRecord) => Effect.Effect<void>
  readonly find: (idHash: string) => Effect.Effect<Option.Option<SessionRecord>>
  readonly touch: (idHash: string, atMs: number) => Effect.Effect<void>
  readonly chooseTenant: (idHash: string, tenantId: string) => Effect.Effect<void>
  readonly remove: (idHash: string) => Effect.Effect<void>
}

export class SessionRepository extends Context.Service<SessionRepository, SessionRepositoryShape>()("@portfolio/console/SessionRepository") {}
