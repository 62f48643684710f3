import { rm } from 'node:fs/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolvePostgresBinaries } from '../../../dev/localplane/postgres-binaries.js';
import { startPostgres, type PostgresServer } from '../../../dev/localplane/postgres-server.js';
import { startSpiceDB, type SpiceDBServer } from '../../../dev/localplane/spicedb-server.js';
import { migrate } from '../../../src/audit/migrations.js';
import { SpiceDBClient } from '../../../src/spicedb/client.js';
import { encodeObjectId } from '../../../src/spicedb/object-id.js';
import { makeStateDir, spicedbBinary } from '../controller/support/harness.js';
import { expectWritesRefused } from '../support/read-only-spicedb.js';
import { fencedBlocks } from './documented-examples.js';

// docs/production.md's SQL, run as the page says, in its order, on a PostgreSQL server of its own (roles belong to
// the server): the roles and databases first, SpiceDB migrated as its owner, the reader's grants after that; then
// the read-only SpiceDB serves as the reader, and the audit schema, migrated as its owner, takes the services'
// login role's records. A statement of the page that fails, or comes in an order that does not work, fails here.

const [BEFORE_ANYTHING, AFTER_SPICEDB_MIGRATIONS] = fencedBlocks('docs/production.md')
  .filter((block) => block.language === 'sql')
  .map((block) => block.text);

let stateDir: string;
let postgres: PostgresServer;
const started: SpiceDBServer[] = [];

/** Each statement on its own, as psql runs a script (CREATE DATABASE cannot run inside a transaction block). */
async function runSql(url: string, sql = '') {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const statement of sql.split(/;\s*$/m).filter((text) => text.trim())) await client.query(statement);
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  stateDir = await makeStateDir('production-database-roles');
  postgres = await startPostgres({ binaries: await resolvePostgresBinaries(), stateDir });
  await runSql(postgres.url, BEFORE_ANYTHING);
});

afterAll(async () => {
  for (const server of started) await server.process.stop();
  await postgres.process.stop();
  await rm(stateDir, { recursive: true, force: true });
});

describe("docs/production.md's PostgreSQL roles, in the page's order", () => {
  it('SpiceDB migrates as its owner; the read-only SpiceDB then serves reads and its Watch as the reader', async () => {
    const binary = await spicedbBinary();
    const writer = await startSpiceDB({
      binary,
      stateDir,
      name: 'spicedb-owner',
      datastore: { engine: 'postgres', url: postgres.urlFor({ database: 'spicedb', user: 'spicedb' }) },
    });
    started.push(writer);
    await runSql(postgres.urlFor({ database: 'spicedb' }), AFTER_SPICEDB_MIGRATIONS);
    const readOnly = await startSpiceDB({
      binary,
      stateDir,
      name: 'spicedb-reader',
      datastore: {
        engine: 'postgres',
        url: postgres.urlFor({ database: 'spicedb', user: 'spicedb_reader' }),
      },
      migrate: false,
      extraArgs: ['--datastore-readonly'],
    });
    started.push(readOnly);
    const plaintext = ({ endpoint, token }: SpiceDBServer) =>
      new SpiceDBClient({ endpoint, token, transport: 'plaintext' });
    const [reader, writes] = [plaintext(readOnly), plaintext(writer)];
    const relationship = (user: string) => ({
      resource: { type: 'resource', id: encodeObjectId('urn:dx:item:weather') },
      relation: 'api_consumer',
      subject: { type: 'user', id: user },
      expiresAt: new Date(Date.now() + 3_600_000),
    });
    const abort = new AbortController();
    try {
      // Writes the schema and a relationship as the owner; the reader's key is refused the same write.
      await expectWritesRefused(readOnly, writer);
      const since = await writes.writeRelationships([
        { operation: 'touch', relationship: relationship('ana') },
      ]);
      const watched = reader.watch({ startCursor: since, signal: abort.signal });
      const nextChange = (async () => {
        for await (const event of watched) if (event.updates.length) return event.updates;
        return [];
      })();
      await writes.writeRelationships([{ operation: 'touch', relationship: relationship('ben') }]);
      expect((await nextChange).map((update) => update.relationship.subject.id)).toEqual(['ben']);
      const pages = [];
      for await (const page of reader.readRelationships({ resourceType: 'resource' })) pages.push(page);
      const subjects = pages.flatMap((page) => page.relationships).map((found) => found.subject.id);
      expect(subjects).toEqual(expect.arrayContaining(['ana', 'ben']));
    } finally {
      abort.abort();
      reader.close();
      writes.close();
    }
  });

  it("the audit schema migrates as its owner, and the services' login role reads its version and appends", async () => {
    const owner = new pg.Pool({
      connectionString: postgres.urlFor({ database: 'audit', user: 'audit_owner' }),
    });
    try {
      expect(await migrate(owner)).not.toEqual([]);
    } finally {
      await owner.end();
    }
    const service = new pg.Client({
      connectionString: postgres.urlFor({ database: 'audit', user: 'acl_api' }),
    });
    await service.connect();
    try {
      const { rows } = await service.query<{ version: number }>(
        'SELECT max(version) AS version FROM audit.schema_migrations',
      );
      expect(rows[0]?.version).toBeGreaterThan(0);
      const { rows: privileges } = await service.query<{ append: boolean; rewrite: boolean }>(
        `SELECT has_table_privilege('audit.records', 'INSERT') AS append,
                has_table_privilege('audit.records', 'UPDATE') AS rewrite`,
      );
      expect(privileges[0]).toEqual({ append: true, rewrite: false });
    } finally {
      await service.end();
    }
  });
});
