import type pg from 'pg';

// Versioned schema migrations of the audit store (docs/audit.md, "Schema and roles"). Each runs once, in
// its own transaction, in version order; every start-up runs the missing ones under a session advisory lock,
// so replicas starting together apply each exactly once. Never edit a released migration: add the next one.

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
];

export interface MigrationSettings {
  /** Records older than this many days are pruned; undefined keeps them for ever. */
  retentionDays?: number;
}

/** Applies the missing migrations and the retention setting; returns the versions it applied. */
export async function migrate(pool: pg.Pool, settings: MigrationSettings = {}): Promise<number[]> {
  const client = await pool.connect();
  try {
    await client.query(`SELECT pg_advisory_lock(${MIGRATION_LOCK})`);
    await client.query('CREATE SCHEMA IF NOT EXISTS audit');
    await client.query(
      'CREATE TABLE IF NOT EXISTS audit.schema_migrations ' +
        '(version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const applied = await appliedVersions(client);
    const pending = MIGRATIONS.filter((migration) => !applied.has(migration.version));
    for (const migration of pending) await apply(client, migration);
    await client.query('UPDATE audit.settings SET retention_days = $1', [settings.retentionDays ?? null]);
    return pending.map((migration) => migration.version);
  } finally {
    await client.query(`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`).catch(() => undefined);
    client.release();
  }
}

async function appliedVersions(client: pg.PoolClient): Promise<Set<number>> {
  const { rows } = await client.query<{ version: number }>('SELECT version FROM audit.schema_migrations');
  return new Set(rows.map((row) => row.version));
}

async function apply(client: pg.PoolClient, migration: Migration): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query(migration.sql);
    await client.query('INSERT INTO audit.schema_migrations (version, name) VALUES ($1, $2)', [
      migration.version,
      migration.name,
    ]);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
}
