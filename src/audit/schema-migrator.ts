import pg from 'pg';
import type { Logger } from '../observability/logger.js';
import { migrate, type MigrationSettings } from './migrations.js';

export interface SchemaMigrator {
  /** Whether the schema is at this version's migrations. */
  ready(): boolean;
  stop(): void;
}

export interface MigratorOptions extends MigrationSettings {
  connectionString: string;
  logger: Logger;
  retryMs?: number;
}

/**
 * Runs the migrations now and, while PostgreSQL cannot be reached, again every `retryMs`: the API starts and
 * serves reads without PostgreSQL, and audited mutations answer 503 until the schema is there.
 */
export async function startSchemaMigrator(options: MigratorOptions): Promise<SchemaMigrator> {
  let done = false;
  let timer: NodeJS.Timeout | undefined;
  const attempt = async () => {
    const pool = new pg.Pool({
      connectionString: options.connectionString,
      max: 1,
      connectionTimeoutMillis: 5_000,
    });
    pool.on('error', () => undefined);
    try {
      const applied = await migrate(pool, options);
      done = true;
      options.logger.info({ applied, retentionDays: options.retentionDays }, 'audit schema migrated');
    } catch (error) {
      options.logger.warn({ err: error }, 'audit schema migration failed; retrying');
      timer = setTimeout(() => void attempt(), options.retryMs ?? 5_000);
      timer.unref();
    } finally {
      await pool.end().catch(() => undefined);
    }
  };
  await attempt();
  return {
    ready: () => done,
    stop: () => clearTimeout(timer),
  };
}
