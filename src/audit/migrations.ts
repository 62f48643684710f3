import { createHash } from 'node:crypto';
import type pg from 'pg';

// Versioned schema migrations of the audit store (docs/audit.md, "Schema and roles"). Each runs once, in
// its own transaction, in version order, under a session advisory lock, so concurrent runs apply each exactly
// once. Never edit a released migration: add the next one (an applied migration's checksum is compared on
// every run, and a changed one is refused).

/** The role the services' login role is a member of: INSERT and SELECT on the records, nothing else. */
export const WRITER_ROLE = 'policy_grant_audit_writer';
const MIGRATION_LOCK = "hashtext('policy-grant-operator/audit/migrations')";

interface Migration {
  version: number;
  name: string;
  sql: string;
}

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'records, chain anchor, settings, writer role, pruning',
    sql: `
      CREATE TABLE audit.records (
        id bigint PRIMARY KEY,
        time timestamptz NOT NULL,
        actor_type text NOT NULL,
        actor_id text NOT NULL,
        action text NOT NULL,
        target_kind text NOT NULL,
        target_id text NOT NULL,
        target_item_id text,
        target_organisation_id text,
        outcome_status integer NOT NULL,
        outcome_detail text,
        request_id text NOT NULL,
        prev_hash text NOT NULL,
        hash text NOT NULL
      );
      CREATE INDEX records_actor ON audit.records (actor_id, id DESC);
      CREATE INDEX records_item ON audit.records (target_item_id, id DESC);
      CREATE INDEX records_target ON audit.records (target_id, id DESC);
      CREATE INDEX records_organisation ON audit.records (target_organisation_id, id DESC);
      CREATE INDEX records_time ON audit.records (time);

      -- Where the chain starts: the hash and id of the last record pruned (genesis before any).
      CREATE TABLE audit.chain_anchor (
        singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        hash text NOT NULL,
        last_pruned_id bigint NOT NULL
      );
      INSERT INTO audit.chain_anchor (hash, last_pruned_id) VALUES (repeat('0', 64), 0);

      CREATE TABLE audit.settings (
        singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        retention_days integer CHECK (retention_days IS NULL OR retention_days > 0)
      );
      INSERT INTO audit.settings (retention_days) VALUES (NULL);

      -- Deletes the records older than the retention the owner set, oldest first, and moves the anchor to
      -- the last one deleted, so that verification of the rest still starts from a known hash. It runs with
      -- the owner's rights: the writer may call it, but cannot choose what it deletes.
      CREATE FUNCTION audit.prune() RETURNS bigint
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = audit, pg_temp AS $$
      DECLARE
        keep_days integer;
        last audit.records%ROWTYPE;
        deleted bigint;
      BEGIN
        SELECT retention_days INTO keep_days FROM audit.settings;
        IF keep_days IS NULL THEN RETURN 0; END IF;
        PERFORM pg_advisory_xact_lock(hashtext('policy-grant-operator/audit/append'));
        SELECT * INTO last FROM audit.records
          WHERE time < now() - make_interval(days => keep_days) ORDER BY id DESC LIMIT 1;
        IF NOT FOUND THEN RETURN 0; END IF;
        DELETE FROM audit.records WHERE id <= last.id;
        GET DIAGNOSTICS deleted = ROW_COUNT;
        UPDATE audit.chain_anchor SET hash = last.hash, last_pruned_id = last.id;
        RETURN deleted;
      END $$;

      DO $$ BEGIN
        CREATE ROLE ${WRITER_ROLE} NOLOGIN;
      EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; -- roles are per server, not per database
      END $$;
      REVOKE ALL ON FUNCTION audit.prune() FROM PUBLIC;
      GRANT USAGE ON SCHEMA audit TO ${WRITER_ROLE};
      GRANT SELECT, INSERT ON audit.records TO ${WRITER_ROLE};
      GRANT SELECT ON audit.chain_anchor, audit.settings TO ${WRITER_ROLE};
      GRANT EXECUTE ON FUNCTION audit.prune() TO ${WRITER_ROLE};
    `,
  },
  {
    version: 2,
    name: 'change keys: one record per change the controller saw in Kubernetes',
    sql: `
      -- What the controller records once per change (a grant's uid and generation, or its deletion); the
      -- ACL API's records have none. Appends skip keys already stored, under the append lock.
      ALTER TABLE audit.records ADD COLUMN change_key text;
      CREATE UNIQUE INDEX records_change_key ON audit.records (change_key) WHERE change_key IS NOT NULL;
    `,
  },
  {
    version: 3,
    name: 'keyed MAC of each record; the writer reads the schema version',
    sql: `
      -- HMAC-SHA-256 of the record's hash under a key the database does not hold (NULL: written unkeyed).
      ALTER TABLE audit.records ADD COLUMN mac text;
      -- The services compare the schema's version with the newest they know before they start.
      GRANT SELECT ON audit.schema_migrations TO ${WRITER_ROLE};
    `,
  },
];

/** The newest schema version this build knows. */
export const LATEST_VERSION = Math.max(...MIGRATIONS.map((migration) => migration.version));

/** A schema this build must not run against: newer than it knows, or an applied migration changed. */
export class AuditSchemaRefusal extends Error {}

/** SHA-256 (hex) of a migration's SQL: what the schema records when it applies it. */
export function migrationChecksum(migration: Pick<Migration, 'sql'>): string {
  return createHash('sha256').update(migration.sql).digest('hex');
}

/** Refuses a schema newer than this build's: its tables may have changed in ways this build does not know. */
export function refuseNewerSchema(version: number): void {
  if (version > LATEST_VERSION) {
    throw new AuditSchemaRefusal(
      `the audit schema is at version ${version}, newer than version ${LATEST_VERSION}, the newest this build ` +
        'knows: run the release that migrated it (or a newer one)',
    );
  }
}

export interface MigrationSettings {
  /** Records older than this many days are pruned; undefined keeps them for ever. */
  retentionDays?: number;
}

/**
 * Applies the missing migrations and the retention setting; returns the versions it applied. Refuses
 * (AuditSchemaRefusal, nothing applied) a schema newer than this build's or an applied migration whose SQL
 * is not this build's.
 */
export async function migrate(pool: pg.Pool, settings: MigrationSettings = {}): Promise<number[]> {
  const client = await pool.connect();
  try {
    await client.query(`SELECT pg_advisory_lock(${MIGRATION_LOCK})`);
    await client.query('CREATE SCHEMA IF NOT EXISTS audit');
    await client.query(
      'CREATE TABLE IF NOT EXISTS audit.schema_migrations ' +
        '(version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    await client.query('ALTER TABLE audit.schema_migrations ADD COLUMN IF NOT EXISTS checksum text');
    const applied = await appliedChecksums(client);
    refuseNewerSchema(Math.max(0, ...applied.keys()));
    refuseChangedMigrations(applied);
    await recordMissingChecksums(client, applied);
    const pending = MIGRATIONS.filter((migration) => !applied.has(migration.version));
    for (const migration of pending) await apply(client, migration);
    await client.query('UPDATE audit.settings SET retention_days = $1', [settings.retentionDays ?? null]);
    return pending.map((migration) => migration.version);
  } finally {
    await client.query(`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`).catch(() => undefined);
    client.release();
  }
}

/** The newest version applied to the schema; 0 before any. Needs only SELECT (the writer has it). */
export async function schemaVersion(client: pg.Pool | pg.PoolClient): Promise<number> {
  const { rows } = await client.query<{ version: number | null }>(
    'SELECT max(version) AS version FROM audit.schema_migrations',
  );
  return rows[0]?.version ?? 0;
}

/** Applied versions and their checksums (null: applied before checksums were recorded). */
async function appliedChecksums(client: pg.PoolClient): Promise<Map<number, string | null>> {
  const { rows } = await client.query<{ version: number; checksum: string | null }>(
    'SELECT version, checksum FROM audit.schema_migrations',
  );
  return new Map(rows.map((row) => [row.version, row.checksum]));
}

function refuseChangedMigrations(applied: ReadonlyMap<number, string | null>): void {
  for (const migration of MIGRATIONS) {
    const recorded = applied.get(migration.version);
    const checksum = migrationChecksum(migration);
    if (recorded && recorded !== checksum) {
      throw new AuditSchemaRefusal(
        `audit migration ${migration.version} (${migration.name}) was applied with checksum ${recorded}, but ` +
          `this build's has checksum ${checksum}: an applied migration must never change; refusing to migrate`,
      );
    }
  }
}

/** Migrations applied before checksums were recorded get this build's (taken on trust, once). */
async function recordMissingChecksums(
  client: pg.PoolClient,
  applied: ReadonlyMap<number, string | null>,
): Promise<void> {
  for (const migration of MIGRATIONS) {
    if (applied.has(migration.version) && applied.get(migration.version) === null) {
      await client.query('UPDATE audit.schema_migrations SET checksum = $2 WHERE version = $1', [
        migration.version,
        migrationChecksum(migration),
      ]);
    }
  }
}

async function apply(client: pg.PoolClient, migration: Migration): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query(migration.sql);
    await client.query('INSERT INTO audit.schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [
      migration.version,
      migration.name,
      migrationChecksum(migration),
    ]);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
}
