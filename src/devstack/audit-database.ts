import pg from 'pg';
import { migrate, WRITER_ROLE } from '../audit/migrations.js';
import type { LocalPostgres } from './local-postgres.js';

export const DEV_DATABASE = 'policy_grant';
/** The ACL API's login role in the development stack: a member of the writer role, nothing more. */
export const DEV_SERVICE_ROLE = 'policy_grant_acl';

export interface AuditDatabase {
  /** The owner's connection (migrations, psql). */
  ownerUrl: string;
  /** The services' connection: INSERT and SELECT on the records only. */
  serviceUrl: string;
}

/**
 * The audit store of the development stack: DATABASE_URL's server when set (the caller's to prepare), else a
 * database of the stack's local PostgreSQL (whose data survives restarts), migrated, with a service role that
 * may only append and read, as in production.
 */
export async function prepareAuditDatabase(
  postgres: LocalPostgres,
  env: NodeJS.ProcessEnv,
  log: (message: string) => void,
): Promise<AuditDatabase> {
  if (env.DATABASE_URL) {
    log('using the PostgreSQL of DATABASE_URL for the audit trail');
    return { ownerUrl: env.DATABASE_MIGRATION_URL ?? env.DATABASE_URL, serviceUrl: env.DATABASE_URL };
  }
  const server = await postgres.server();
  const ownerUrl = await server.ensureDatabase(DEV_DATABASE);
  await prepare(ownerUrl);
  return { ownerUrl, serviceUrl: server.urlFor({ database: DEV_DATABASE, user: DEV_SERVICE_ROLE }) };
}

/** Migrates, and makes the service role (trust authentication on loopback: no password). */
async function prepare(ownerUrl: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: ownerUrl, max: 1 });
  try {
    await migrate(pool);
  } finally {
    await pool.end();
  }
  await withClient(ownerUrl, async (client) => {
    const { rowCount } = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [DEV_SERVICE_ROLE]);
    if (rowCount === 0) await client.query(`CREATE ROLE ${DEV_SERVICE_ROLE} LOGIN IN ROLE ${WRITER_ROLE}`);
  });
}

async function withClient(url: string, use: (client: pg.Client) => Promise<void>): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await use(client);
  } finally {
    await client.end();
  }
}
