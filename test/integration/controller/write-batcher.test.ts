import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FencedOffError, FencedSpiceDB } from '../../../src/controller/fenced-spicedb.js';
import { WriteBatcher } from '../../../src/controller/write-batcher.js';
import { silentLogger } from '../../../src/runtime/logger.js';
import type { Relationship, RelationshipUpdate } from '../../../src/spicedb/client.js';
import { readSchemaText } from '../../../src/spicedb/schema.js';
import { makeStateDir, startOwnSpiceDB, type OwnSpiceDB } from './support/harness.js';

// The write batcher over the fenced store against a real SpiceDB: a batch carries the fence of its term like a
// single write, so a deposed leader's batch is refused whole by SpiceDB.

let spicedb: OwnSpiceDB;

beforeAll(async () => {
  spicedb = await startOwnSpiceDB(await makeStateDir('controller-write-batcher'), 'spicedb-write-batcher');
});

afterAll(async () => {
  await spicedb?.stop();
});

const ITEM = randomUUID();
const EXPIRY = new Date(Date.now() + 24 * 3_600_000);

const consumer = (userId: string): Relationship => ({
  resource: { type: 'resource', id: ITEM },
  relation: 'api_consumer',
  subject: { type: 'user', id: userId },
  expiresAt: EXPIRY,
});
const touch = (relationship: Relationship): RelationshipUpdate[] => [{ operation: 'touch', relationship }];

/** One replica's batched, fenced writer; `term` is what its election says, whatever SpiceDB holds. */
function replica(term: string) {
  const batches: number[] = [];
  const fenced = new FencedSpiceDB({
    client: spicedb.client,
    leaseName: 'write-batcher-test',
    term: () => term,
    schema: readSchemaText(),
    onFenceLost: () => undefined,
    logger: silentLogger,
  });
  return { writer: new WriteBatcher({ store: fenced, onBatch: (writes) => batches.push(writes) }), batches };
}

async function usersWithAccess(): Promise<string[]> {
  const users: string[] = [];
  const pages = spicedb.client.readRelationships({ resourceType: 'resource', resourceId: ITEM });
  for await (const page of pages) users.push(...page.relationships.map((r) => r.subject.id));
  return users.sort();
}

describe('a batch of writes under the fence', () => {
  it('lands whole while its term holds the fence, and writes nothing once a successor took it', async () => {
    const leader = replica('term-a');
    const first = Array.from({ length: 5 }, () => randomUUID());
    await Promise.all(first.map((user) => leader.writer.writeRelationshipsInBatches(touch(consumer(user)))));
    expect(await usersWithAccess()).toEqual([...first].sort());
    expect(leader.batches.reduce((sum, writes) => sum + writes, 0)).toBe(5);
    expect(leader.batches.length).toBeLessThan(5);

    const successor = replica('term-b');
    const successorUser = randomUUID();
    await successor.writer.writeRelationshipsInBatches(touch(consumer(successorUser)));

    // The deposed leader still believes in its term: SpiceDB refuses its batch by the fence.
    const late = Array.from({ length: 5 }, () => randomUUID());
    const refused = late.map((user) => leader.writer.writeRelationshipsInBatches(touch(consumer(user))));
    for (const write of refused) await expect(write).rejects.toBeInstanceOf(FencedOffError);
    expect(leader.batches.at(-1)).toBe(5);
    expect(await usersWithAccess()).toEqual([...first, successorUser].sort());
  });
});
