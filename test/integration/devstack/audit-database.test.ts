import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEV_CHAIN_KEY_FILE,
  prepareAuditDatabase,
  type AuditDatabase,
} from '../../../dev/stack/audit-database.js';
import type { LocalPostgres } from '../../../dev/stack/local-postgres.js';
import { asSuperuser, testDatabase } from '../support/database.js';

// The development stack's audit store when DATABASE_URL names an existing server: migrated there as its owner
// before any service starts, with a chain key of the state folder's (kept across restarts) unless
// AUDIT_CHAIN_KEY gives one. Real PostgreSQL (the integration tests' shared server).

/** With DATABASE_URL the stack's own PostgreSQL is never started. */
const noLocalPostgres: LocalPostgres = {
  server: () => Promise.reject(new Error('the local PostgreSQL was started although DATABASE_URL is set')),
  stop: () => Promise.resolve(),
};

let stateDir: string;
const logged: string[] = [];
const prepare = (env: NodeJS.ProcessEnv): Promise<AuditDatabase> =>
  prepareAuditDatabase(noLocalPostgres, stateDir, env, (line) => logged.push(line));

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'devstack-audit-'));
});

afterAll(async () => {
  await rm(stateDir, { recursive: true, force: true });
});

describe('the development stack’s audit store on DATABASE_URL', () => {
  it('migrates it as its owner and keeps one generated chain key in the state folder', async () => {
    const { name, url } = await testDatabase('devstack_audit');
    const first = await prepare({ DATABASE_URL: url });
    expect(first).toMatchObject({ ownerUrl: url, serviceUrl: url });
    expect(logged).toContain('using the PostgreSQL of DATABASE_URL for the audit trail');
    const tables = await asSuperuser<{ table: string | null }>(
      "SELECT to_regclass('audit.records')::text AS table",
      [],
      name,
    );
    expect(tables.rows[0]?.table).toBe('audit.records');

    const keyFile = join(stateDir, DEV_CHAIN_KEY_FILE);
    expect((await readFile(keyFile, 'utf8')).trim()).toBe(first.chainKey);
    expect(first.chainKey.length).toBeGreaterThanOrEqual(32);
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    expect((await prepare({ DATABASE_URL: url })).chainKey).toBe(first.chainKey);
  });

  it('migrates through DATABASE_MIGRATION_URL and takes AUDIT_CHAIN_KEY when they are given', async () => {
    const { url } = await testDatabase('devstack_audit_owner');
    const key = 'a chain key of the caller, 32 bytes or more';
    const prepared = await prepare({
      DATABASE_URL: 'postgres://service:unused@127.0.0.1:1/never-connected',
      DATABASE_MIGRATION_URL: url,
      AUDIT_CHAIN_KEY: key,
    });
    expect(prepared).toEqual({
      ownerUrl: url,
      serviceUrl: 'postgres://service:unused@127.0.0.1:1/never-connected',
      chainKey: key,
    });
  });
});
