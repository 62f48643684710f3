import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSpiceDB, type SpiceDBServer } from '../../../dev/localplane/spicedb-server.js';
import { SpiceDBClient, type Relationship } from '../../../src/spicedb/client.js';
import { encodeObjectId } from '../../../src/spicedb/object-id.js';
import { readSchemaText } from '../../../src/spicedb/schema.js';
import { makeStateDir, spicedbBinary } from '../controller/support/harness.js';
import { uniqueId } from '../support/cluster.js';
import { testDatabase } from '../support/database.js';
import {
  startServiceUnderTest,
  untilReady,
  type DecisionServiceUnderTest,
} from './support/decision-service.js';
import { apiCheck } from './support/service-on-own-spicedb.js';

// The decision service reads through a SpiceDB that cannot write: a second SpiceDB on the same PostgreSQL
// datastore, started with --datastore-readonly and a preshared key of its own, as the chart deploys it. Its
// key writes nothing; the Watch the revision barrier needs runs on it, so the service is ready, sees grants and
// revocations the writing SpiceDB made, and stays fresh without a token.

let stateDir: string;
let writer: SpiceDBServer;
let readOnly: SpiceDBServer;
let writes: SpiceDBClient;
let service: DecisionServiceUnderTest;

const plaintext = (server: SpiceDBServer) =>
  new SpiceDBClient({ endpoint: server.endpoint, token: server.token, transport: 'plaintext' });

beforeAll(async () => {
  stateDir = await makeStateDir('decision-read-only');
  const { url } = await testDatabase('spicedb_read_only');
  const binary = await spicedbBinary();
  const datastore = { engine: 'postgres' as const, url };
  writer = await startSpiceDB({ binary, stateDir, name: 'spicedb-writer', datastore });
  writes = plaintext(writer);
  await writes.ensureSchema(readSchemaText());
  readOnly = await startSpiceDB({
    binary,
    stateDir,
    name: 'spicedb-read-only',
    datastore,
    extraArgs: ['--datastore-readonly'],
  });
  service = await startServiceUnderTest({ spicedb: { endpoint: readOnly.endpoint, token: readOnly.token } });
  await untilReady(service);
});

afterAll(async () => {
  await service?.stop();
  writes?.close();
  await readOnly?.process.stop();
  await writer?.process.stop();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

function grant(itemId: string, userId: string): Relationship {
  return {
    resource: { type: 'resource', id: encodeObjectId(itemId) },
    relation: 'api_consumer',
    subject: { type: 'user', id: userId },
    expiresAt: new Date(Date.now() + 3_600_000),
  };
}

describe('a read-only SpiceDB on the same datastore', () => {
  it('refuses every write with its key: relationships and the schema', async () => {
    const client = plaintext(readOnly);
    try {
      const relationship = grant(`urn:dx:item:${uniqueId('refused')}`, uniqueId('user'));
      await expect(client.writeRelationships([{ operation: 'touch', relationship }])).rejects.toThrow(
        /read-?only/i,
      );
      await expect(client.ensureSchema(`${readSchemaText()}\ndefinition refused_type {}\n`)).rejects.toThrow(
        /read-?only/i,
      );
    } finally {
      client.close();
    }
    // The same write through the writing SpiceDB's key lands. Waiting for the service's Watch to deliver it keeps
    // it from being taken, in the next test, for that test's own change.
    const relationship = grant(`urn:dx:item:${uniqueId('written')}`, uniqueId('user'));
    expect(
      await service.afterWatchDelivers(() =>
        writes.writeRelationships([{ operation: 'touch', relationship }]),
      ),
    ).not.toBe('');
  });

  it('serves the decision service: its Watch delivers the writer’s grants and revocations, checks follow them', async () => {
    const itemId = `urn:dx:item:${uniqueId('read-only')}`;
    const userId = uniqueId('user');
    const relationship = grant(itemId, userId);
    await service.afterWatchDelivers(() => writes.writeRelationships([{ operation: 'touch', relationship }]));
    expect((await service.check(apiCheck(userId, itemId))).body.result.allowed).toBe(true);
    await service.afterWatchDelivers(() =>
      writes.writeRelationships([{ operation: 'delete', relationship }]),
    );
    expect((await service.check(apiCheck(userId, itemId))).body.result.allowed).toBe(false);
  });
});
