import pg from 'pg';
import type { AuditConfig } from '../../../src/config/audit-config.js';
import { controlPlane, uniqueId } from './cluster.js';

/** A connection string of the shared PostgreSQL server with another database or user. */
export function withDatabase(
  url: string,
  changes: { database?: string; user?: string; password?: string },
): string {
  const parsed = new URL(url);
  if (changes.database !== undefined) parsed.pathname = `/${changes.database}`;
  if (changes.user !== undefined) parsed.username = changes.user;
  if (changes.password !== undefined) parsed.password = changes.password;
  return parsed.toString();
}

/** Runs one statement as the server's superuser, on `database` (default the server's own). */
export async function asSuperuser<R extends pg.QueryResultRow = pg.QueryResultRow>(
  sql: string,
  values: unknown[] = [],
  database?: string,
): Promise<pg.QueryResult<R>> {
  const url = database ? withDatabase(controlPlane().postgresUrl, { database }) : controlPlane().postgresUrl;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query<R>(sql, values);
  } finally {
    await client.end();
  }
}

/** A fresh database on the shared server (a test file's own audit store), as its superuser's URL. */
export async function testDatabase(prefix: string): Promise<{ name: string; url: string }> {
  const name = uniqueId(prefix).replace(/[^a-z0-9]/g, '_');
  await asSuperuser(`CREATE DATABASE ${name}`);
  return { name, url: withDatabase(controlPlane().postgresUrl, { database: name }) };
}

/** The key of the audit records' MACs in the tests' ACL APIs (AUDIT_CHAIN_KEY): never the database's to hold. */
export const TEST_CHAIN_KEY = Buffer.from('a test chain key, 32 bytes or more, held by the services only');

/** The audit configuration of an ACL API on a fresh database, migrated at start-up, records keyed. */
export async function testAuditConfig(prefix: string): Promise<AuditConfig> {
  return { databaseUrl: (await testDatabase(prefix)).url, migrate: true, chainKey: TEST_CHAIN_KEY };
}
