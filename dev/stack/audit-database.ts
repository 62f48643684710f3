import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { migrate, WRITER_ROLE } from '../../src/audit/migrations.js';
import type { LocalPostgres } from './local-postgres.js';

export const DEV_DATABASE = 'policy_grant';
/** The ACL API's login role in the development stack: a member of the writer role, nothing more. */
export const DEV_SERVICE_ROLE = 'policy_grant_acl';
/** The audit chain's MAC key in the state folder, readable by its owner only. */
export const DEV_CHAIN_KEY_FILE = 'audit-chain-key';

export interface AuditDatabase {
  /** The owner's connection (migrations, psql). */
  ownerUrl: string;
  /** The services' connection: INSERT and SELECT on the records only. */
  serviceUrl: string;
  /** The key of the records' MACs (AUDIT_CHAIN_KEY), which the database does not hold. */
  chainKey: string;
}

/**
 * The audit store of the development stack: DATABASE_URL's server when set (the caller's to prepare), else a
 * database of the stack's local PostgreSQL (whose data survives restarts) with a service role that may only
 * append and read, as in production. Either way migrated here, as its owner, before any service starts (the
 * services get the service role's connection only), and the chain key is AUDIT_CHAIN_KEY or the state folder's.
 */
export async function prepareAuditDatabase(
  postgres: LocalPostgres,
  stateDir: string,
  env: NodeJS.ProcessEnv,
  log: (message: string) => void,
): Promise<AuditDatabase> {
  const chainKey = env.AUDIT_CHAIN_KEY ?? (await ensureChainKey(stateDir));
  if (env.DATABASE_URL) {
    log('using the PostgreSQL of DATABASE_URL for the audit trail');
    const ownerUrl = env.DATABASE_MIGRATION_URL ?? env.DATABASE_URL;
    await migrateAs(ownerUrl);
    return { ownerUrl, serviceUrl: env.DATABASE_URL, chainKey };
  }
  const server = await postgres.server();
  const ownerUrl = await server.ensureDatabase(DEV_DATABASE);
  await migrateAs(ownerUrl);
  await withClient(ownerUrl, async (client) => {
    const { rowCount } = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [DEV_SERVICE_ROLE]);
    if (rowCount === 0) await client.query(`CREATE ROLE ${DEV_SERVICE_ROLE} LOGIN IN ROLE ${WRITER_ROLE}`);
  });
  return {
    ownerUrl,
    serviceUrl: server.urlFor({ database: DEV_DATABASE, user: DEV_SERVICE_ROLE }),
    chainKey,
  };
}

async function migrateAs(ownerUrl: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: ownerUrl, max: 1 });
  try {
    await migrate(pool);
  } finally {
    await pool.end();
  }
}

/** The state folder's chain key: generated once (kept across restarts, so older records still verify). */
async function ensureChainKey(stateDir: string): Promise<string> {
  const path = join(stateDir, DEV_CHAIN_KEY_FILE);
  const existing = await readFile(path, 'utf8').catch(() => undefined);
  if (existing) return existing.trim();
  const key = randomBytes(48).toString('base64');
  await writeFile(path, `${key}\n`, { mode: 0o600, flag: 'wx' }).catch(() => undefined);
  return (await readFile(path, 'utf8')).trim();
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
