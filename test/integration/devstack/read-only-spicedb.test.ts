import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSpiceDB, type SpiceDBServer } from '../../../dev/localplane/spicedb-server.js';
import { startReadOnlySpiceDB } from '../../../dev/stack/read-only-spicedb.js';
import { makeStateDir, spicedbBinary } from '../controller/support/harness.js';
import { testDatabase } from '../support/database.js';
import { expectWritesRefused } from '../support/read-only-spicedb.js';

// The decision service's SpiceDB of `npm start`: on PostgreSQL a read-only SpiceDB on the stack SpiceDB's
// database, whose key writes nothing; on memory none (one process holds the relationships).

let stateDir: string;
let binary: string;
let writer: SpiceDBServer;
let readOnly: SpiceDBServer | undefined;
const datastore = { engine: 'postgres' as const, url: '' };

beforeAll(async () => {
  stateDir = await makeStateDir('devstack-read-only');
  binary = await spicedbBinary();
  datastore.url = (await testDatabase('devstack_read_only')).url;
  writer = await startSpiceDB({ binary, stateDir, name: 'spicedb-writer', datastore });
  readOnly = await startReadOnlySpiceDB(datastore, { binary, stateDir }, () => undefined);
});

afterAll(async () => {
  await readOnly?.process.stop();
  await writer?.process.stop();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

describe('the development stack’s read-only SpiceDB', () => {
  it('on PostgreSQL: a key of its own, which cannot write where the writer’s key writes', async () => {
    if (!readOnly) throw new Error('no read-only SpiceDB on PostgreSQL');
    expect(readOnly.token).not.toBe(writer.token);
    await expectWritesRefused(readOnly, writer);
  });

  it('on memory: none, the decision service keeps the one SpiceDB', async () => {
    expect(await startReadOnlySpiceDB({ engine: 'memory' }, { binary, stateDir }, () => undefined)).toBe(
      undefined,
    );
  });
});
