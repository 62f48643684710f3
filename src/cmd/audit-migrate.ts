import pg from 'pg';
import { z } from 'zod';
import { migrate } from '../audit/migrations.js';
import { auditEnvironment } from '../config/audit-config.js';
import { commonEnvironment } from '../config/common-config.js';
import { readEnvironment } from '../config/environment.js';
import { createLogger } from '../observability/logger.js';
import { runIfEntrypoint } from './process-lifecycle.js';

// `node dist/cmd/main.js audit-migrate`: the audit schema's migrations as a step of their own (the chart's Helm
// hook Job), the only process that holds the owner's connection string. It applies the missing migrations and
// the retention setting, then exits: 0 when the schema is at this build's version, 1 with the reason otherwise
// (unreachable, a newer schema, a changed migration).

const migrateEnvironment = z.object({
  DATABASE_MIGRATION_URL: auditEnvironment.shape.DATABASE_URL,
  AUDIT_RETENTION_DAYS: auditEnvironment.shape.AUDIT_RETENTION_DAYS,
  LOG_LEVEL: commonEnvironment.shape.LOG_LEVEL,
});

/** Applies the missing migrations with the environment's settings; returns the versions it applied. */
export async function auditMigrate(environment: NodeJS.ProcessEnv): Promise<number[]> {
  const env = readEnvironment(migrateEnvironment, environment);
  const logger = createLogger({ level: env.LOG_LEVEL, name: 'audit-migrate' });
  const pool = new pg.Pool({
    connectionString: env.DATABASE_MIGRATION_URL,
    max: 1,
    connectionTimeoutMillis: 10_000,
  });
  try {
    const retention = env.AUDIT_RETENTION_DAYS ? { retentionDays: env.AUDIT_RETENTION_DAYS } : {};
    const applied = await migrate(pool, retention);
    logger.info({ applied, ...retention }, 'audit schema migrated');
    return applied;
  } finally {
    await pool.end();
  }
}

export async function main(): Promise<void> {
  await auditMigrate(process.env);
}

runIfEntrypoint(import.meta.url, 'audit-migrate', main);
