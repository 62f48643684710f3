import pg from 'pg';
import type { Logger } from '../observability/logger.js';
import {
  AuditSchemaRefusal,
  LATEST_VERSION,
  migrate,
  refuseNewerSchema,
  schemaVersion,
  type MigrationSettings,
} from './migrations.js';

export interface SchemaMigrator {
  /** Whether the schema is at this build's version. */
  ready(): boolean;
  stop(): void;
}

export interface MigratorOptions extends MigrationSettings {
  connectionString: string;
  logger: Logger;
  /** True: this process runs the missing migrations (owner's URL); false: it waits until another step has. */
  migrate: boolean;
  retryMs?: number;
}

// What PostgreSQL answers the writer before migration 3 let it read the versions, or before any migration.
const NOT_YET_READABLE = new Set(['42501', '42P01', '3F000']);

/**
 * Brings the schema to this build's version (migrating) or waits for it (not migrating), now and, while
 * PostgreSQL cannot be reached or the schema is older, again every `retryMs`: the API starts and serves reads
 * without PostgreSQL, and audited mutations answer 503 until the schema is there. A schema this build must not
 * run against (newer than it knows, a changed migration) is refused: at the first attempt the start fails with
 * the reason; found later, the process logs it, stops retrying and keeps mutations at 503.
 */
export async function startSchemaMigrator(options: MigratorOptions): Promise<SchemaMigrator> {
  let done = false;
  let timer: NodeJS.Timeout | undefined;
  const attempt = async (first: boolean) => {
    const pool = new pg.Pool({
      connectionString: options.connectionString,
      max: 1,
      connectionTimeoutMillis: 5_000,
    });
    pool.on('error', () => undefined);
    try {
      await (options.migrate ? migrateLogged(pool, options) : awaitVersion(pool));
      done = true;
    } catch (error) {
      if (error instanceof AuditSchemaRefusal) {
        if (first) throw error;
        options.logger.error({ err: error }, 'audit schema refused: audited mutations answer 503');
        return;
      }
      options.logger.warn({ err: error }, 'audit schema not ready; retrying');
      timer = setTimeout(() => void attempt(false), options.retryMs ?? 5_000);
      timer.unref();
    } finally {
      await pool.end().catch(() => undefined);
    }
  };
  await attempt(true);
  return {
    ready: () => done,
    stop: () => clearTimeout(timer),
  };
}

async function migrateLogged(pool: pg.Pool, options: MigratorOptions): Promise<void> {
  const applied = await migrate(pool, options);
  options.logger.info({ applied, retentionDays: options.retentionDays }, 'audit schema migrated');
}

/** Resolves when the schema is at this build's version; refuses a newer one; throws (retry) for an older. */
export async function awaitVersion(pool: pg.Pool): Promise<void> {
  const version = await schemaVersion(pool).catch((error: unknown) => {
    if (NOT_YET_READABLE.has((error as { code?: string }).code ?? '')) return 0;
    throw error;
  });
  refuseNewerSchema(version);
  if (version < LATEST_VERSION) {
    throw new Error(
      `the audit schema is at version ${version}, older than version ${LATEST_VERSION}, which this build ` +
        'needs: waiting for the migrations (node dist/cmd/main.js audit-migrate)',
    );
  }
}

/**
 * A service that only appends (the controller) refuses, at its start, a schema newer than this build's; an
 * unreachable PostgreSQL or an older schema is left to its appends, which are retried until the schema is there.
 */
export async function refuseNewerSchemaAt(connectionString: string): Promise<void> {
  const pool = new pg.Pool({ connectionString, max: 1, connectionTimeoutMillis: 5_000 });
  pool.on('error', () => undefined);
  try {
    await awaitVersion(pool);
  } catch (error) {
    if (error instanceof AuditSchemaRefusal) throw error;
  } finally {
    await pool.end().catch(() => undefined);
  }
}
