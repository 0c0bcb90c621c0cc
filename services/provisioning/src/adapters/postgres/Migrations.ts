import { SqlClient } from "effect/sql"
import { indexPublishedOutbox } from "@portfolio/platform/nats"
import { createSecurityEventsTable, indexSecurityEventsByTime } from "@portfolio/platform/security"
import { SchemaMigrationsLive } from "@portfolio/platform/sql"
import { Effect } from "effect"

const createTenantsAndMembers = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE provisioning.tenants (
      id uuid PRIMARY KEY,
      slug text NOT NULL UNIQUE,
      created_at timestamptz NOT NULL
    )`
  // Removal keeps the row (records created by the member keep its user_sub); only active rows
  // take part in the uniqueness of an e-mail or a subject within a tenant.
  yield* sql`
    CREATE TABLE provisioning.members (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      tenant_id uuid NOT NULL REFERENCES provisioning.tenants (id),
      user_sub text NOT NULL,
      email text NOT NULL,
      arb_role text NOT NULL CHECK (arb_role IN ('tenant-admin', 'architect', 'portfolio-manager', 'contributor', 'viewer', 'arb-member')),
      source text NOT NULL CHECK (source IN ('SIGNUP', 'INVITATION', 'SSO_JIT')),
      granted_at timestamptz NOT NULL,
      removed_at timestamptz
    )`
  yield* sql`CREATE UNIQUE INDEX members_active_email ON provisioning.members (tenant_id, lower(email)) WHERE removed_at IS NULL`
  yield* sql`CREATE UNIQUE INDEX members_active_sub ON provisioning.members (tenant_id, user_sub) WHERE removed_at IS NULL`
  yield* sql`CREATE INDEX members_tenant_granted ON provisioning.members (tenant_id, granted_at DESC)`
  // `superseded_at` takes an expired invitation out of the pending-uniqueness index when a new
  // invitation for the same e-mail is created: an index predicate cannot read the clock.
  yield* sql`
    CREATE TABLE provisioning.invitations (
      id uuid PRIMARY KEY,
      tenant_id uuid NOT NULL REFERENCES provisioning.tenants (id),
      email text NOT NULL,
      arb_role text NOT NULL CHECK (arb_role IN ('tenant-admin', 'architect', 'portfolio-manager', 'contributor', 'viewer', 'arb-member')),
      invited_by_email text NOT NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      accepted_at timestamptz,
      revoked_at timestamptz,
      superseded_at timestamptz,
      token_hash text NOT NULL UNIQUE,
      CHECK (expires_at = created_at + interval '168 hours')
    )`
  yield* sql`
    CREATE UNIQUE INDEX invitations_one_pending ON provisioning.invitations (tenant_id, lower(email))
    WHERE accepted_at IS NULL AND revoked_at IS NULL AND superseded_at IS NULL`
  yield* sql`CREATE INDEX invitations_tenant_created ON provisioning.invitations (tenant_id, created_at DESC)`
  // The built-in identity provider's global accounts; a password is set when an invitation is accepted.
  yield* sql`
    CREATE TABLE provisioning.accounts (
      subject uuid PRIMARY KEY,
      email text NOT NULL,
      password_hash text,
      created_at timestamptz NOT NULL DEFAULT now(),
      password_set_at timestamptz
    )`
  yield* sql`CREATE UNIQUE INDEX accounts_email ON provisioning.accounts (lower(email))`
  yield* sql`
    CREATE TABLE provisioning.outbound_mail (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      to_address text NOT NULL,
      subject text NOT NULL,
      text_body text NOT NULL,
      html_body text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX outbound_mail_to ON provisioning.outbound_mail (lower(to_address), id DESC)`
  yield* sql`
    CREATE TABLE provisioning.outbox (
      id uuid PRIMARY KEY,
      subject text NOT NULL,
      payload jsonb NOT NULL,
      created_at timestamptz NOT NULL,
      published_at timestamptz
    )`
  yield* sql`CREATE INDEX outbox_unpublished ON provisioning.outbox (created_at) WHERE published_at IS NULL`
})

/**
 * The local mailer's bodies become sealed (see adapters/postgres/SealedMail.ts). Mail kept before held
 * its magic link in clear and cannot be sealed here, where the key is not known: it is dropped, and
 * a pending invitation whose mail it was is revoked and sent again by its tenant-admin.
 */
const sealOutboundMail = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DELETE FROM provisioning.outbound_mail`
  yield* sql`ALTER TABLE provisioning.outbound_mail DROP COLUMN text_body, DROP COLUMN html_body, ADD COLUMN sealed_body bytea NOT NULL`
})

/** The outbox becomes the platform's (libs/platform/src/nats/Outbox.ts), which keeps each event's trace context. */
const outboxHeaders = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE provisioning.outbox ADD COLUMN headers jsonb NOT NULL DEFAULT '{}'`
})

/**
 * Who each event has been mailed to (ports/NotificationLog.ts). Kept, not pruned: the stream keeps
 * its events, and a durable recreated after a long outage replays them all.
 */
const eventNotifications = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE provisioning.event_notifications (
      event_id uuid NOT NULL,
      recipient text NOT NULL CHECK (recipient = lower(recipient)),
      notified_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (event_id, recipient)
    )`
})

/**
 * Pages of the invitation and member lists (docs/product-rules.md#lists) resume after the last
 * row's sort key, tie-breaker included: indexes in exactly the lists' order let each page be read
 * from the cursor on. The invitations' new index covers the old one's use (counting a tenant's
 * recent invitations); the members' old index stays for finding a removed membership.
 */
const listPages = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX invitations_tenant_newest ON provisioning.invitations (tenant_id, created_at DESC, id DESC)`
  yield* sql`DROP INDEX provisioning.invitations_tenant_created`
  yield* sql`
    CREATE INDEX members_active_newest ON provisioning.members (tenant_id, granted_at DESC, id DESC)
    WHERE removed_at IS NULL`
})

/**
 * Each invitation's kind: `invitation` (a tenant-admin's, counted by the hourly limit) or `welcome`
 * (the link that lets a new tenant's first admin set a password; docs/product-rules.md). Every row
 * stored before is an `invitation`.
 */
const invitationKinds = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE provisioning.invitations
    ADD COLUMN kind text NOT NULL DEFAULT 'invitation' CHECK (kind IN ('invitation', 'welcome'))`
})

/**
 * A person's active memberships in every tenant, by userSub: what the console's sign-in and each of
 * its pages read (the other member indexes start with the tenant).
 */
const membersBySub = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX members_active_by_sub ON provisioning.members (user_sub) WHERE removed_at IS NULL`
})

/**
 * Provisioning's own security log (usecases/SecurityLog.ts): what happens on its magic-link page,
 * which the console's log never sees. Read by tenant, newest first, as the console reads its own.
 */
const securityEvents = createSecurityEventsTable("provisioning", { tenant: "required" })

/**
 * Wrong current passwords typed on an invitation's link (docs/product-rules.md, "The magic link"):
 * the acceptance page of an existing account checks its password, and must not become a way round
 * the console's lockout, so that a link dies after a few wrong ones.
 */
const invitationWrongPasswords = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE provisioning.invitations
    ADD COLUMN wrong_passwords integer NOT NULL DEFAULT 0 CHECK (wrong_passwords >= 0)`
})

/**
 * What retention's batches read (adapters/postgres/Pruning.ts): the security log by time, the
 * outbox's published rows. Plain CREATE INDEX, as above: the migrator runs each in a transaction.
 */
const retentionIndexes = Effect.andThen(indexSecurityEventsByTime("provisioning"), indexPublishedOutbox("provisioning"))

/**
 * A tenant's single sign-on connection (usecases/SingleSignOn.ts), one per tenant. The client
 * secret is sealed (SsoConnectionRepositoryPg.ts): a copy of the database alone cannot use it.
 * Removing a tenant's connection deletes its row, sealed secret included.
 */
const ssoConnections = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE provisioning.sso_connections (
      tenant_id uuid PRIMARY KEY REFERENCES provisioning.tenants (id),
      issuer text NOT NULL,
      client_id text NOT NULL,
      sealed_client_secret bytea NOT NULL,
      domains jsonb NOT NULL CHECK (jsonb_array_length(domains) >= 1),
      default_role text NOT NULL CHECK (default_role IN ('tenant-admin', 'architect', 'portfolio-manager', 'contributor', 'viewer', 'arb-member')),
      role_claim text,
      role_map jsonb NOT NULL,
      required boolean NOT NULL,
      break_glass jsonb NOT NULL,
      domains_confirmed boolean NOT NULL,
      email_verified_claim text NOT NULL,
      secret_set_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`
})

/**
 * Sign-ins through a tenant's provider between their start and their callback (at most 10
 * minutes), each taken once: the state is kept as its hash, its nonce and PKCE verifier beside it.
 */
const ssoSignIns = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE provisioning.sso_sign_ins (
      state_hash text PRIMARY KEY,
      tenant_id uuid NOT NULL REFERENCES provisioning.tenants (id),
      nonce text NOT NULL,
      code_verifier text NOT NULL,
      expires_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX sso_sign_ins_expiry ON provisioning.sso_sign_ins (expires_at)`
})

/**
 * The tenants' SCIM Users (docs/scim.md, "Users"), linked to a membership (`user_sub`) or a pending
 * invitation. A deleted User keeps its row and leaves the uniqueness of its userName, e-mail and
 * member to the Users that remain; `active` is read from the members, never stored.
 */
const scimUsers = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE provisioning.scim_users (
      id uuid PRIMARY KEY,
      tenant_id uuid NOT NULL REFERENCES provisioning.tenants (id),
      user_name text NOT NULL,
      external_id text,
      email text NOT NULL,
      given_name text,
      family_name text,
      formatted_name text,
      display_name text,
      arb_role text NOT NULL CHECK (arb_role IN ('tenant-admin', 'architect', 'portfolio-manager', 'contributor', 'viewer', 'arb-member')),
      user_sub text,
      invitation_id uuid REFERENCES provisioning.invitations (id),
      version bigint NOT NULL CHECK (version >= 1),
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      deleted_at timestamptz
    )`
  yield* sql`CREATE UNIQUE INDEX scim_users_user_name ON provisioning.scim_users (tenant_id, lower(user_name)) WHERE deleted_at IS NULL`
  yield* sql`CREATE UNIQUE INDEX scim_users_email ON provisioning.scim_users (tenant_id, lower(email)) WHERE deleted_at IS NULL`
  // One User per member: adoption and acceptance link a member to at most one.
  yield* sql`
    CREATE UNIQUE INDEX scim_users_user_sub ON provisioning.scim_users (tenant_id, user_sub)
    WHERE deleted_at IS NULL AND user_sub IS NOT NULL`
  yield* sql`CREATE INDEX scim_users_external_id ON provisioning.scim_users (tenant_id, external_id) WHERE deleted_at IS NULL`
  yield* sql`CREATE INDEX scim_users_listing ON provisioning.scim_users (tenant_id, created_at, id) WHERE deleted_at IS NULL`
  // The acceptance of an invitation finds the User it was made for.
  yield* sql`CREATE INDEX scim_users_invitation ON provisioning.scim_users (invitation_id) WHERE invitation_id IS NOT NULL`
})

export const MigrationsLive = SchemaMigrationsLive("provisioning", {
  "0001_provisioning": createTenantsAndMembers,
  "0002_seal_outbound_mail": sealOutboundMail,
  "0003_outbox_headers": outboxHeaders,
  "0004_event_notifications": eventNotifications,
  "0005_list_pages": listPages,
  "0006_invitation_kinds": invitationKinds,
  "0007_members_by_sub": membersBySub,
  "0008_security_events": securityEvents,
  "0009_invitation_wrong_passwords": invitationWrongPasswords,
  "0010_retention_indexes": retentionIndexes,
  "0011_sso_connections": ssoConnections,
  "0012_sso_sign_ins": ssoSignIns,
  "0013_scim_users": scimUsers
})
