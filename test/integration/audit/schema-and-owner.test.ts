import { spawn } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordHash, type AuditRecord } from '../../../src/audit/audit-record.js';
import { AuditReader } from '../../../src/audit/audit-reader.js';
import { AuditStore } from '../../../src/audit/audit-store.js';
import { verifyChain } from '../../../src/audit/chain-verifier.js';
import { LATEST_VERSION, migrate, WRITER_ROLE } from '../../../src/audit/migrations.js';
import { refuseNewerSchemaAt, startSchemaMigrator } from '../../../src/audit/schema-migrator.js';
import { auditMigrate } from '../../../src/cmd/audit-migrate.js';
import { createLogger } from '../../../src/observability/logger.js';
import { repoRoot } from '../../../dev/localplane/repo-root.js';
import { uniqueId } from '../support/cluster.js';
import { asSuperuser, TEST_CHAIN_KEY, testDatabase, withDatabase } from '../support/database.js';
import { numberedEntry as entry } from './support/entries.js';

// The audit schema as a step of its own and the chain against its database's owner, on a real PostgreSQL:
// `audit-migrate` migrates alone with the owner's URL; applied migrations carry checksums and a changed one is
// refused; services refuse a schema newer than they know; the owner, who may UPDATE the records and recompute
// their SHA-256 chain, cannot forge their MACs; and time never goes back along the chain.

const logger = createLogger({ level: 'silent', name: 'audit-schema-test' });

/** `node main.ts audit-migrate` as the image runs it (through tsx here), with `env`. */
function auditMigrateProcess(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const root = repoRoot();
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(root, 'src/cmd/main.ts'), 'audit-migrate'],
      {
        cwd: root,
        env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** A login role that is a member of the writer role only: the services' connection to `database`. */
async function writerUrl(database: { name: string; url: string }): Promise<string> {
  const login = uniqueId('writer').replace(/-/g, '_');
  await asSuperuser(`CREATE ROLE ${login} LOGIN PASSWORD 'writer' IN ROLE ${WRITER_ROLE}`);
  return withDatabase(database.url, { user: login, password: 'writer' });
}

describe('audit-migrate', () => {
  it('migrates alone with the owner’s URL, records each checksum, and a second run applies nothing', async () => {
    const database = await testDatabase('audit_migrate');
    const first = await auditMigrateProcess({
      DATABASE_MIGRATION_URL: database.url,
      AUDIT_RETENTION_DAYS: '30',
    });
    expect(first.code, first.output).toBe(0);
    expect(first.output).toContain('audit schema migrated');
    const { rows } = await asSuperuser<{ version: number; checksum: string }>(
      'SELECT version, checksum FROM audit.schema_migrations ORDER BY version',
      [],
      database.name,
    );
    expect(rows.map((row) => row.version)).toEqual([1, 2, 3]);
    for (const row of rows) expect(row.checksum).toMatch(/^[0-9a-f]{64}$/);
    const settings = await asSuperuser('SELECT retention_days FROM audit.settings', [], database.name);
    expect(settings.rows).toEqual([{ retention_days: 30 }]);
    const second = await auditMigrateProcess({ DATABASE_MIGRATION_URL: database.url });
    expect(second.code, second.output).toBe(0);
    expect(second.output).toContain('"applied":[]');
  });

  it('refuses an applied migration whose checksum is not this build’s', async () => {
    const database = await testDatabase('audit_checksum');
    await auditMigrate({ DATABASE_MIGRATION_URL: database.url, LOG_LEVEL: 'silent' });
    await asSuperuser(
      "UPDATE audit.schema_migrations SET checksum = repeat('f', 64) WHERE version = 2",
      [],
      database.name,
    );
    await expect(auditMigrate({ DATABASE_MIGRATION_URL: database.url, LOG_LEVEL: 'silent' })).rejects.toThrow(
      /audit migration 2 .* was applied with checksum f{64}, but this build's has/,
    );
  });

  it('fails without the owner’s URL, naming the variable', async () => {
    await expect(auditMigrate({ LOG_LEVEL: 'silent' })).rejects.toThrow('DATABASE_MIGRATION_URL');
  });
});

describe('a schema newer than this build', () => {
  let database: { name: string; url: string };
  let services: string;

  beforeAll(async () => {
    database = await testDatabase('audit_newer');
    await auditMigrate({ DATABASE_MIGRATION_URL: database.url, LOG_LEVEL: 'silent' });
    services = await writerUrl(database);
    await asSuperuser(
      "INSERT INTO audit.schema_migrations (version, name, checksum) VALUES ($1, 'from the future', '')",
      [LATEST_VERSION + 1],
      database.name,
    );
  });

  const newer = `the audit schema is at version ${LATEST_VERSION + 1}, newer than version ${LATEST_VERSION}`;

  it('stops the ACL API’s start, whether it migrates or waits for the migrations step', async () => {
    for (const migrating of [false, true]) {
      const connectionString = migrating ? database.url : services;
      await expect(startSchemaMigrator({ connectionString, migrate: migrating, logger })).rejects.toThrow(
        newer,
      );
    }
  });

  it('stops the controller’s start', async () => {
    await expect(refuseNewerSchemaAt(services)).rejects.toThrow(newer);
  });

  it('is refused by audit-migrate too', async () => {
    await expect(auditMigrate({ DATABASE_MIGRATION_URL: database.url, LOG_LEVEL: 'silent' })).rejects.toThrow(
      newer,
    );
  });
});

describe('an ACL API that does not migrate', () => {
  it('waits for the migrations step, then is ready', async () => {
    const database = await testDatabase('audit_waits');
    await asSuperuser(`CREATE SCHEMA audit`, [], database.name);
    const migrator = await startSchemaMigrator({
      connectionString: database.url,
      migrate: false,
      logger,
      retryMs: 50,
    });
    const owner = new pg.Pool({ connectionString: database.url, max: 1 });
    try {
      expect(migrator.ready()).toBe(false);
      await migrate(owner);
      await expect.poll(() => migrator.ready()).toBe(true);
    } finally {
      migrator.stop();
      await owner.end();
    }
  });
});

describe('the chain against its database’s owner', () => {
  let database: { name: string; url: string };
  let store: AuditStore;
  let reader: AuditReader;

  beforeAll(async () => {
    database = await testDatabase('audit_owner');
    await auditMigrate({ DATABASE_MIGRATION_URL: database.url, LOG_LEVEL: 'silent' });
    store = new AuditStore({ connectionString: await writerUrl(database), chainKey: TEST_CHAIN_KEY });
    reader = new AuditReader(store.pool);
  });

  afterAll(() => store.close());

  /** What an owner can do: rewrite records from `id` on, each hash recomputed, so that the chain links. */
  async function rewriteFrom(records: AuditRecord[], id: string): Promise<void> {
    let prevHash: string | undefined;
    for (const record of records.filter((candidate) => BigInt(candidate.id) >= BigInt(id))) {
      const { hash: _old, ...content } = record;
      const rewritten = {
        ...content,
        actor: { type: 'user' as const, id: 'someone-else' },
        prevHash: prevHash ?? record.prevHash,
      };
      prevHash = recordHash(rewritten);
      await asSuperuser(
        'UPDATE audit.records SET actor_id = $2, prev_hash = $3, hash = $4 WHERE id = $1',
        [record.id, rewritten.actor.id, rewritten.prevHash, prevHash],
        database.name,
      );
    }
  }

  it('a rewrite with recomputed SHA-256 hashes passes the hash chain, and every rewritten MAC is found', async () => {
    const records = await store.append([1, 2, 3, 4, 5].map(entry));
    expect(await verifyChain(reader, {}, TEST_CHAIN_KEY)).toMatchObject({
      valid: true,
      keyed: true,
      checked: 5,
    });
    const third = records[2]?.id as string;
    await rewriteFrom(records, third);

    expect(await verifyChain(reader, {}), 'SHA-256 alone: the owner can recompute it').toMatchObject({
      valid: true,
      keyed: false,
    });
    const keyed = await verifyChain(reader, {}, TEST_CHAIN_KEY);
    expect(keyed.valid).toBe(false);
    expect(keyed.breaks).toEqual(
      records.slice(2).map((record) => expect.objectContaining({ id: record.id, reason: 'forged' })),
    );
  });

  it('a record stored without a MAC (or whose MAC was removed) is found', async () => {
    const [record] = await store.append([entry(6)]);
    await asSuperuser('UPDATE audit.records SET mac = NULL WHERE id = $1', [record?.id], database.name);
    const report = await verifyChain(reader, { from: new Date(record?.time ?? 0) }, TEST_CHAIN_KEY);
    expect(report.breaks).toContainEqual(expect.objectContaining({ id: record?.id, reason: 'unkeyed' }));
  });

  it('dates a record no earlier than its predecessor, and refuses to follow one far in the future', async () => {
    const [last] = await store.append([entry(7)]);
    const ahead = new Date(Date.now() + 60_000);
    await asSuperuser('UPDATE audit.records SET time = $2 WHERE id = $1', [last?.id, ahead], database.name);
    const [next] = await store.append([entry(8)]);
    expect(next?.time, 'a clock a minute behind: the predecessor’s time').toBe(ahead.toISOString());

    const far = new Date(Date.now() + 3_600_000);
    await asSuperuser('UPDATE audit.records SET time = $2 WHERE id = $1', [next?.id, far], database.name);
    await expect(store.append([entry(9)])).rejects.toThrow(/refusing to date new records after it/);
    await asSuperuser('UPDATE audit.records SET time = $2 WHERE id = $1', [next?.id, ahead], database.name);
    const [after] = await store.append([entry(9)]);
    expect(Date.parse(after?.time ?? '')).toBeGreaterThanOrEqual(ahead.getTime());
  });

  it('finds a record dated before its predecessor', async () => {
    const [first, second] = await store.append([entry(10), entry(11)]);
    const earlier = new Date(Date.parse(first?.time ?? '') - 1_000);
    const { hash: _old, ...content } = second as AuditRecord;
    const backdated = { ...content, time: earlier.toISOString() };
    await asSuperuser(
      'UPDATE audit.records SET time = $2, hash = $3 WHERE id = $1',
      [second?.id, earlier, recordHash(backdated)],
      database.name,
    );
    const report = await verifyChain(reader, {});
    expect(report.breaks).toContainEqual(expect.objectContaining({ id: second?.id, reason: 'time' }));
  });
});
