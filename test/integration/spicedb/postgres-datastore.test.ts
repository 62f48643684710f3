import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rm } from 'node:fs/promises';
import type { Relationship } from '../../../src/spicedb/client.js';
import { encodeObjectId } from '../../../src/spicedb/object-id.js';
import {
  makeStateDir,
  relationshipsOn,
  startOwnSpiceDB,
  userCan,
  type OwnSpiceDB,
} from '../controller/support/harness.js';
import { uniqueId } from '../support/cluster.js';
import { testDatabase } from '../support/database.js';

// SpiceDB on PostgreSQL, as production runs it: real processes, a database of this file's own on the run's
// PostgreSQL server (whatever datastore the rest of the run uses).
let stateDir: string;
let spicedb: OwnSpiceDB;

beforeAll(async () => {
  stateDir = await makeStateDir('spicedb-postgres');
  const { url } = await testDatabase('spicedb_restart');
  spicedb = await startOwnSpiceDB(stateDir, 'spicedb-postgres', { engine: 'postgres', url });
});

afterAll(async () => {
  await spicedb?.stop();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

function grant(itemId: string, userId: string): Relationship {
  return {
    resource: { type: 'resource', id: encodeObjectId(itemId) },
    relation: 'api_consumer',
    subject: { type: 'user', id: encodeObjectId(userId) },
    expiresAt: new Date(Date.now() + 3_600_000),
  };
}

describe('SpiceDB on PostgreSQL', () => {
  it('keeps a relationship when its process is killed and a new one starts on the same database', async () => {
    const itemId = `urn:dx:item:${uniqueId('kept')}`;
    const userId = uniqueId('user');
    const zedToken = await spicedb.client.writeRelationships([
      { operation: 'touch', relationship: grant(itemId, userId) },
    ]);
    const killed = spicedb.server.process;

    await killed.kill();
    expect(await killed.exited).toBe('SIGKILL');
    await spicedb.restart(); // migrates again (nothing to do) and serves on the same database and port
    expect(spicedb.server.process.pid).not.toBe(killed.pid);

    expect((await relationshipsOn(spicedb.client, itemId)).map((r) => r.subject.id)).toEqual([
      encodeObjectId(userId),
    ]);
    expect(await userCan(spicedb.client, itemId, 'api_consumer', userId)).toBe(true);
    // A ZedToken handed out before the kill still names a revision of this datastore.
    expect(await userCan(spicedb.client, itemId, 'api_consumer', userId, { status: { zedToken } })).toBe(
      true,
    );
  });

  it('streams its changes on the Watch (track_commit_timestamp=on on the server)', async () => {
    const itemId = `urn:dx:item:${uniqueId('watched')}`;
    const touch = (id: string) => ({
      operation: 'touch' as const,
      relationship: grant(id, uniqueId('user')),
    });
    // From a revision before the write, so that the write is delivered however late the stream opens.
    const startCursor = await spicedb.client.writeRelationships([touch(`urn:dx:item:${uniqueId('before')}`)]);
    await spicedb.client.writeRelationships([touch(itemId)]);
    const abort = new AbortController();
    const seen: string[] = [];
    for await (const event of spicedb.client.watch({ startCursor, signal: abort.signal })) {
      seen.push(...event.updates.map((update) => update.relationship.resource.id));
      if (seen.includes(encodeObjectId(itemId))) abort.abort();
    }
    expect(seen).toContain(encodeObjectId(itemId));
  });
});
