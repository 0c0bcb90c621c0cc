import type { Unavailable } from "@portfolio/domain"
import { Context, Data, type DateTime, type Effect, type Option } from "effect"
import type { PartnerClientRecord } from "../domain/PartnerClient.js"

/** A new secret and what becomes of the one it replaces. */
export interface SecretChange {
  readonly secretHash: Uint8Array
  /** The secret before the rotation, with the end of its grace; none without a grace. */
  readonly previous: { readonly secretHash: Uint8Array; readonly expiresAt: DateTime.Utc } | null
  readonly at: DateTime.Utc
}

/** The tenant has a client of that name already. */
export class PartnerNameTaken extends Data.TaggedError("PartnerNameTaken")<{ readonly name: string }> {}

/** The new client's id is another client's already (its random suffix drew the same): draw again. */
export class ClientIdTaken extends Data.TaggedError("ClientIdTaken")<{ readonly clientId: string }> {}

/** Where the gateway keeps its partner clients. Failures of the storage itself surface as `Unavailable`. */
export interface PartnerClientRepositoryShape {
  /** Fails with `PartnerNameTaken` when the tenant has a client of that name, `ClientIdTaken` when any tenant has one of that id. */
  readonly insert: (record: PartnerClientRecord) => Effect.Effect<void, PartnerNameTaken | ClientIdTaken | Unavailable>
  readonly find: (clientId: string) => Effect.Effect<Option.Option<PartnerClientRecord>, Unavailable>
  /** A tenant's clients, oldest first. */
  readonly listByTenant: (tenantId: string) => Effect.Effect<ReadonlyArray<PartnerClientRecord>, Unavailable>
  /** Answers the client as stored afterwards, or none when it does not exist. */
  readonly changeSecret: (clientId: string, change: SecretChange) => Effect.Effect<Option.Option<PartnerClientRecord>, Unavailable>
  /**
   * Disables the client at `at` (keeping an earlier disabling time), or enables it with `null`;
   * answers the client as stored afterwards, or none when it does not exist.
   */
  readonly setDisabled: (clientId: string, at: DateTime.Utc | null, updatedAt: DateTime.Utc) => Effect.Effect<Option.Option<PartnerClientRecord>, Unavailable>
}

export class PartnerClientRepository extends Context.Service<PartnerClientRepository, PartnerClientRepositoryShape>()("@portfolio/gateway/PartnerClientRepository") {}
