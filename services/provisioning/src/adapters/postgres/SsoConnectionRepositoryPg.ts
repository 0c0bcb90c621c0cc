import { SqlClient, SqlSchema } from "effect/sql"
import { ArbRole } from "@portfolio/domain"
import { internalSecretSettings, makeSecretSealer, type SecretSealerShape } from "@portfolio/platform/security"
import { Context, DateTime, Effect, Layer, Option, Redacted, Schema } from "effect"
import { type SsoConnectionRecord, SsoConnectionRepository } from "../../ports/SsoConnectionRepository.js"

/**
 * The key of the client secrets, derived from INTERNAL_SECRET for this use only; each secret bound
 * to its tenant's id, so that a sealed secret copied onto another tenant's row does not open there
 * (docs/security.md, "Single sign-on").
 */
export const ClientSecretLabel = "portfolio/provisioning/sso_client_secret/v1"

/** Seals and opens the connections' client secrets with the keys of the internal secrets. */
export class ClientSecretSealer extends Context.Service<ClientSecretSealer, SecretSealerShape>()("@portfolio/provisioning/ClientSecretSealer") {
  static readonly fixed = (current: string, previous?: string) =>
    Layer.sync(ClientSecretSealer, () => makeSecretSealer(ClientSecretLabel, current, previous))

  /** From INTERNAL_SECRET and INTERNAL_SECRET_PREVIOUS, read and validated as the assertions read them. */
  static readonly layer = Layer.unwrap(
    Effect.map(internalSecretSettings, ({ current, previous }) => ClientSecretSealer.fixed(current, previous))
  )
}

const ConnectionRow = Schema.Struct({
  tenantId: Schema.String,
  issuer: Schema.String,
  clientId: Schema.String,
  domains: Schema.Array(Schema.String),
  defaultRole: ArbRole,
  roleClaim: Schema.NullOr(Schema.String),
  roleMap: Schema.Array(Schema.Struct({ value: Schema.String, role: ArbRole })),
  required: Schema.Boolean,
  breakGlass: Schema.Array(Schema.String),
  domainsConfirmed: Schema.Boolean,
  emailVerifiedClaim: Schema.String,
  secretSetAt: Schema.DateTimeUtcFromDate,
  updatedAt: Schema.DateTimeUtcFromDate
})

const SecretRow = Schema.Struct({ sealedClientSecret: Schema.Uint8Array })

export const SsoConnectionRepositoryPg = Layer.effect(
  SsoConnectionRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const sealer = yield* ClientSecretSealer
    const findRow = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: ConnectionRow,
      execute: (tenantId) =>
        sql`SELECT tenant_id, issuer, client_id, domains, default_role, role_claim, role_map, required, break_glass, domains_confirmed, email_verified_claim, secret_set_at, updated_at
            FROM provisioning.sso_connections WHERE tenant_id = ${tenantId}`
    })
    const findSecret = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: SecretRow,
      execute: (tenantId) => sql`SELECT sealed_client_secret FROM provisioning.sso_connections WHERE tenant_id = ${tenantId}`
    })
    const save = (record: SsoConnectionRecord, clientSecret: Redacted.Redacted<string>) =>
      Effect.gen(function*() {
        const sealed = yield* sealer.sealSecret(record.tenantId, Redacted.value(clientSecret))
        const columns = {
          tenant_id: record.tenantId,
          issuer: record.issuer,
          client_id: record.clientId,
          sealed_client_secret: sealed,
          domains: JSON.stringify(record.domains),
          default_role: record.defaultRole,
          role_claim: record.roleClaim,
          role_map: JSON.stringify(record.roleMap),
          required: record.required,
          break_glass: JSON.stringify(record.breakGlass),
          domains_confirmed: record.domainsConfirmed,
          email_verified_claim: record.emailVerifiedClaim,
          secret_set_at: DateTime.toDate(record.secretSetAt),
          updated_at: DateTime.toDate(record.updatedAt)
        }
        yield* sql`
          INSERT INTO provisioning.sso_connections ${sql.insert(columns)}
          ON CONFLICT (tenant_id) DO UPDATE SET
            issuer = excluded.issuer, client_id = excluded.client_id, sealed_client_secret = excluded.sealed_client_secret,
            domains = excluded.domains, default_role = excluded.default_role, role_claim = excluded.role_claim,
            role_map = excluded.role_map, required = excluded.required, break_glass = excluded.break_glass,
            domains_confirmed = excluded.domains_confirmed, email_verified_claim = excluded.email_verified_claim,
            secret_set_at = excluded.secret_set_at, updated_at = excluded.updated_at`
      }).pipe(Effect.orDie)
    return SsoConnectionRepository.of({
      save,
      find: (tenantId) => findRow(tenantId).pipe(Effect.orDie),
      findClientSecret: (tenantId) =>
        findSecret(tenantId).pipe(
          Effect.map(Option.flatMap(({ sealedClientSecret }) => sealer.openSecret(tenantId, sealedClientSecret))),
          Effect.map(Option.map((secret) => Redacted.make(secret))),
          Effect.orDie
        ),
      tenantIdsForDomain: (domain) =>
        sql<{ tenantId: string }>`SELECT tenant_id FROM provisioning.sso_connections
                                  WHERE domains_confirmed AND domains @> ${JSON.stringify([domain])}::jsonb`.pipe(
          Effect.map((rows) => rows.map((row) => row.tenantId)),
          Effect.orDie
        ),
      confirmDomains: (tenantId, at) =>
        sql`UPDATE provisioning.sso_connections SET domains_confirmed = true, updated_at = ${DateTime.toDate(at)} WHERE tenant_id = ${tenantId}`.pipe(
          Effect.andThen(findRow(tenantId)),
          Effect.orDie
        ),
      remove: (tenantId) =>
        sql`DELETE FROM provisioning.sso_connections WHERE tenant_id = ${tenantId} RETURNING tenant_id`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie
        )
    })
  })
)
