import { SqlClient } from "effect/sql"
import { createOutboxTable, indexPublishedOutbox } from "@portfolio/platform/nats"
import { SchemaMigrationsLive } from "@portfolio/platform/sql"
import { Effect } from "effect"

/**
 * The referential's own schema. Codes sort bytewise (COLLATE "C") so that every reader, SQL or
 * in memory, agrees on "sorted by code". Tenants are in every key: a row of one tenant can only
 * ever reference rows of the same tenant.
 */
const createReferential = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    CREATE TYPE referential.application_status AS ENUM ('ACTIVE', 'PLANNED', 'DEPRECATED', 'RETIRED');
    CREATE TYPE referential.data_classification AS ENUM ('PUBLIC', 'INTERNAL', 'CONFIDENTIAL', 'RESTRICTED');
    CREATE TYPE referential.criticality AS ENUM ('MISSION_CRITICAL', 'IMPORTANT', 'NOMINAL', 'LOW');
    -- Declaration order is the canonical order regulations are stored and read in.
    CREATE TYPE referential.regulation AS ENUM ('DORA', 'NIS2', 'RGPD', 'PCI_DSS', 'HDS', 'ISO_27001');
    CREATE TYPE referential.assignment_role AS ENUM
      ('PRODUCT_OWNER', 'BUSINESS_OWNER', 'TECH_LEAD', 'ARCHITECT', 'SECURITY_OFFICER', 'DATA_OWNER');

    -- Bumped in the transaction of every write; its row lock also serialises a tenant's writers.
    CREATE TABLE referential.tenant_revisions (
      tenant_id uuid PRIMARY KEY,
      revision bigint NOT NULL
    );

    CREATE TABLE referential.applications (
      tenant_id uuid NOT NULL,
      code text COLLATE "C" NOT NULL,
      name text NOT NULL,
      description text,
      parent_code text COLLATE "C",
      status referential.application_status NOT NULL DEFAULT 'ACTIVE',
      data_classification referential.data_classification NOT NULL DEFAULT 'INTERNAL',
      criticality referential.criticality NOT NULL DEFAULT 'NOMINAL',
      rto_hours double precision CHECK (rto_hours >= 0),
      rpo_hours double precision CHECK (rpo_hours >= 0),
      license_cost bigint CHECK (license_cost >= 0),
      support_cost bigint CHECK (support_cost >= 0),
      infra_cost bigint CHECK (infra_cost >= 0),
      staff_cost bigint CHECK (staff_cost >= 0),
      -- The single amount of before the split into four costs (deprecated annualCost).
      legacy_annual_cost bigint CHECK (legacy_annual_cost >= 0),
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, code),
      FOREIGN KEY (tenant_id, parent_code) REFERENCES referential.applications (tenant_id, code),
      CHECK (parent_code <> code)
    );
    CREATE INDEX applications_parent ON referential.applications (tenant_id, parent_code) WHERE parent_code IS NOT NULL;
    CREATE INDEX applications_status ON referential.applications (tenant_id, status, code);
    CREATE INDEX applications_criticality ON referential.applications (tenant_id, criticality, code);
    CREATE INDEX applications_data_classification ON referential.applications (tenant_id, data_classification, code);

    CREATE TABLE referential.application_regulations (
      tenant_id uuid NOT NULL,
      application_code text COLLATE "C" NOT NULL,
      regulation referential.regulation NOT NULL,
      PRIMARY KEY (tenant_id, application_code, regulation),
      FOREIGN KEY (tenant_id, application_code) REFERENCES referential.applications (tenant_id, code) ON DELETE CASCADE
    );
    CREATE INDEX application_regulations_by_token ON referential.application_regulations (tenant_id, regulation, application_code);

    CREATE TABLE referential.application_role_assignments (
      tenant_id uuid NOT NULL,
      application_code text COLLATE "C" NOT NULL,
      position smallint NOT NULL,
      role referential.assignment_role NOT NULL,
      contact text NOT NULL CHECK (contact <> '' AND position(',' IN contact) = 0),
      PRIMARY KEY (tenant_id, application_code, position),
      UNIQUE (tenant_id, application_code, role, contact),
      FOREIGN KEY (tenant_id, application_code) REFERENCES referential.applications (tenant_id, code) ON DELETE CASCADE
    );

    CREATE TABLE referential.application_changes (
      seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      id uuid NOT NULL UNIQUE,
      tenant_id uuid NOT NULL,
      application_code text COLLATE "C" NOT NULL,
      field text NOT NULL CHECK (field IN ('criticality', 'rtoHours', 'rpoHours', 'dataClassification', 'regulations',
        'roleAssignments', 'licenseCost', 'supportCost', 'infraCost', 'staffCost', 'status')),
      old_value text,
      new_value text,
      changed_by text NOT NULL,
      changed_at timestamptz NOT NULL,
      FOREIGN KEY (tenant_id, application_code) REFERENCES referential.applications (tenant_id, code)
    );
    CREATE INDEX application_changes_newest ON referential.application_changes (tenant_id, application_code, changed_at DESC, seq DESC);

    CREATE TABLE referential.functions (
      id uuid PRIMARY KEY,
      tenant_id uuid NOT NULL,
      code text COLLATE "C" NOT NULL,
      name text NOT NULL,
      description text,
      parent_id uuid,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      UNIQUE (tenant_id, code),
      UNIQUE (tenant_id, id),
      FOREIGN KEY (tenant_id, parent_id) REFERENCES referential.functions (tenant_id, id),
      CHECK (parent_id <> id)
    );
    CREATE INDEX functions_children ON referential.functions (tenant_id, parent_id);

    CREATE TABLE referential.function_applications (
      tenant_id uuid NOT NULL,
      function_id uuid NOT NULL,
      application_code text COLLATE "C" NOT NULL,
      PRIMARY KEY (tenant_id, function_id, application_code),
      FOREIGN KEY (tenant_id, function_id) REFERENCES referential.functions (tenant_id, id) ON DELETE CASCADE,
      FOREIGN KEY (tenant_id, application_code) REFERENCES referential.applications (tenant_id, code)
    );
    CREATE INDEX function_applications_by_application ON referential.function_applications (tenant_id, application_code);
  `)
})

/**
 * Application events (docs/product-rules.md#events): the outbox, and each application's revision,
 * which its events carry. Applications written before count as at their first revision.
 */
const applicationEvents = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE referential.applications ADD COLUMN revision bigint NOT NULL DEFAULT 1 CHECK (revision >= 1)`
  // Every write names the revision: a writer that forgot it must fail rather than reset it to 1.
  yield* sql`ALTER TABLE referential.applications ALTER COLUMN revision DROP DEFAULT`
  yield* createOutboxTable("referential")
})

/**
 * DAS records (docs/product-rules.md#referential): several per application, the tenant in every
 * key, and a submission's author and time present exactly when the record is SUBMITTED.
 */
const das = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    CREATE TYPE referential.das_status AS ENUM ('DRAFT', 'SUBMITTED');
    CREATE TABLE referential.das (
      tenant_id uuid NOT NULL,
      id uuid NOT NULL,
      application_code text COLLATE "C" NOT NULL,
      title text NOT NULL CHECK (title <> ''),
      content jsonb CHECK (jsonb_typeof(content) = 'object'),
      status referential.das_status NOT NULL,
      created_at timestamptz NOT NULL,
      submitted_by text,
      submitted_at timestamptz,
      PRIMARY KEY (tenant_id, id),
      FOREIGN KEY (tenant_id, application_code) REFERENCES referential.applications (tenant_id, code),
      CHECK ((status = 'SUBMITTED') = (submitted_by IS NOT NULL) AND (submitted_by IS NULL) = (submitted_at IS NULL))
    );
    CREATE INDEX das_by_application ON referential.das (tenant_id, application_code);
  `)
})

/**
 * The revision per scope (ports/TenantRevisions.ts): the tenant's revision at which its
 * applications, and its functions with their links, last moved, so that a write of one leaves
 * the cached reads of the other valid. `revision` stays, moved by every write that changes
 * something, as the previous version reads it (and moves it alone, on every write). Existing rows
 * take 0: their revision is ahead of both, which reads as every scope moved at it.
 */
const scopedRevisions = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE referential.tenant_revisions
      ADD COLUMN applications_revision bigint NOT NULL DEFAULT 0,
      ADD COLUMN functions_revision bigint NOT NULL DEFAULT 0`
})

/**
 * The function search (`q`: a case-insensitive substring of code, name or description, as
 * `ILIKE '%q%'`): one trigram index per column, which PostgreSQL ORs into a BitmapOr instead of
 * reading every function of the tenant (docs/architecture.md, "The read path"). One index per column
 * rather than one on their concatenation, so that a match can never span two fields. pg_trgm is a
 * trusted extension: the role that migrates needs CREATE on the database, as for its schema.
 * Wherever it is installed, its operator class is named with that schema.
 */
const functionSearchTrigrams = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE EXTENSION IF NOT EXISTS pg_trgm`
  const [extension] = yield* sql<{ readonly schema: string }>`
    SELECT n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'`
  const trigrams = `"${extension!.schema.replaceAll('"', '""')}".gin_trgm_ops`
  for (const column of ["code", "name", "description"]) {
    yield* sql.unsafe(`CREATE INDEX functions_${column}_trigrams ON referential.functions USING gin (${column} ${trigrams})`)
  }
})

/**
 * The statistics' breakdowns of applications kept with the writes: one row per tenant, dimension
 * (status, criticality, data classification) and value, moved in the transaction of the statement
 * that inserts or updates applications, by triggers that count its transition tables (a bulk
 * insert of 10,000 rows moves at most a dozen rows once). Counting the tenant's applications at each
 * read after a write took 16-18 ms at 10,000 of them (docs/architecture.md, "Performance"); reading
 * the tallies is one index range of a dozen rows. The triggers live with the table, so that every
 * writer (this version, the previous one during a rolling upgrade, a restore) keeps them true.
 * Applications are never deleted, so no DELETE trigger. Writers of a tenant hold its lock
 * (ports/TenantRevisions.ts), so these rows add no waiting of their own. No CHECK (n >= 0): an
 * upsert's proposed row carries the negative delta of an update before it meets the existing row.
 */
const applicationTallies = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    CREATE TABLE referential.application_tallies (
      tenant_id uuid NOT NULL,
      dimension text COLLATE "C" NOT NULL CHECK (dimension IN ('status', 'criticality', 'data_classification')),
      value text COLLATE "C" NOT NULL,
      n bigint NOT NULL,
      PRIMARY KEY (tenant_id, dimension, value)
    );

    CREATE FUNCTION referential.tally_inserted_applications() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO referential.application_tallies AS t (tenant_id, dimension, value, n)
        SELECT a.tenant_id, d.dimension, d.value, count(*)
        FROM inserted a
        CROSS JOIN LATERAL (VALUES ('status', a.status::text), ('criticality', a.criticality::text), ('data_classification', a.data_classification::text)) AS d (dimension, value)
        GROUP BY 1, 2, 3
        ORDER BY 1, 2, 3
      ON CONFLICT (tenant_id, dimension, value) DO UPDATE SET n = t.n + EXCLUDED.n;
      RETURN NULL;
    END $$;

    CREATE FUNCTION referential.tally_updated_applications() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO referential.application_tallies AS t (tenant_id, dimension, value, n)
        SELECT tenant_id, dimension, value, sum(delta)
        FROM (
          SELECT a.tenant_id, d.dimension, d.value, 1 AS delta
          FROM after_update a
          CROSS JOIN LATERAL (VALUES ('status', a.status::text), ('criticality', a.criticality::text), ('data_classification', a.data_classification::text)) AS d (dimension, value)
          UNION ALL
          SELECT b.tenant_id, d.dimension, d.value, -1 AS delta
          FROM before_update b
          CROSS JOIN LATERAL (VALUES ('status', b.status::text), ('criticality', b.criticality::text), ('data_classification', b.data_classification::text)) AS d (dimension, value)
        ) AS moves
        GROUP BY 1, 2, 3
        HAVING sum(delta) <> 0
        ORDER BY 1, 2, 3
      ON CONFLICT (tenant_id, dimension, value) DO UPDATE SET n = t.n + EXCLUDED.n;
      RETURN NULL;
    END $$;

    CREATE TRIGGER applications_tally_inserted AFTER INSERT ON referential.applications
      REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION referential.tally_inserted_applications();
    CREATE TRIGGER applications_tally_updated AFTER UPDATE ON referential.applications
      REFERENCING OLD TABLE AS before_update NEW TABLE AS after_update FOR EACH STATEMENT EXECUTE FUNCTION referential.tally_updated_applications();

    INSERT INTO referential.application_tallies (tenant_id, dimension, value, n)
      SELECT a.tenant_id, d.dimension, d.value, count(*)
      FROM referential.applications a
      CROSS JOIN LATERAL (VALUES ('status', a.status::text), ('criticality', a.criticality::text), ('data_classification', a.data_classification::text)) AS d (dimension, value)
      GROUP BY 1, 2, 3;
  `)
})

/**
 * Each application row's write sequence: a number taken from one sequence whenever the row is
 * inserted or updated, by a trigger, so that every writer (this version, the previous one during a
 * rolling upgrade, a restore) takes one. A tenant's writers hold its lock from before their first
 * write until their commit (ports/TenantRevisions.ts), so within a tenant the numbers follow the
 * commits: a snapshot that shows a row at number n shows every row of the tenant numbered below n,
 * and a write it does not show is numbered above the greatest it shows. What changed since a
 * snapshot is then the rows numbered above its greatest: posi after a write of one application
 * reads that one and its children, not the versions of 10,000 (ports/ApplicationRepository.ts,
 * docs/architecture.md "The read path"). CACHE 1 (the default): a session's cached numbers would
 * come out of commit order. Rows written before are numbered 0: below every snapshot's greatest.
 */
const applicationWriteSequence = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    CREATE SEQUENCE referential.application_write_seq AS bigint CACHE 1;
    ALTER TABLE referential.applications ADD COLUMN write_seq bigint NOT NULL DEFAULT 0;

    CREATE FUNCTION referential.number_application_write() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      NEW.write_seq := nextval('referential.application_write_seq');
      RETURN NEW;
    END $$;

    CREATE TRIGGER applications_write_seq BEFORE INSERT OR UPDATE ON referential.applications
      FOR EACH ROW EXECUTE FUNCTION referential.number_application_write();

    CREATE INDEX applications_write_seq ON referential.applications (tenant_id, write_seq);
  `)
})

export const MigrationsLive = SchemaMigrationsLive("referential", {
  "0001_create_referential": createReferential,
  "0002_application_events": applicationEvents,
  "0003_das": das,
  // What retention's batches read (adapters/postgres/Pruning.ts): the published outbox rows.
  "0004_outbox_published": indexPublishedOutbox("referential"),
  "0005_scoped_revisions": scopedRevisions,
  "0006_function_search_trigrams": functionSearchTrigrams,
  "0007_application_tallies": applicationTallies,
  "0008_application_write_sequence": applicationWriteSequence
})
