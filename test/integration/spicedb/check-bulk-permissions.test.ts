import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpiceDBClient } from '../../../src/spicedb/client.js';
import type { BulkCheckItem } from '../../../src/spicedb/client.js';
import { SpiceDBError, SpiceDBUnavailableError } from '../../../src/spicedb/errors.js';
import { encodeObjectId } from '../../../src/spicedb/object-id.js';
import { readSchemaText } from '../../../src/spicedb/schema.js';
import { testSpiceDB, uniqueId } from '../support/cluster.js';

// The shared SpiceDB of the run: every test names its own objects.
let client: SpiceDBClient;

beforeAll(async () => {
  client = new SpiceDBClient({ ...testSpiceDB(), transport: 'plaintext' });
  await client.ensureSchema(readSchemaText());
});

afterAll(() => client.close());

/** Items and users of their own; each user views the item of the same index. */
async function viewers(count: number) {
  const items = Array.from({ length: count }, () => ({
    type: 'resource',
    id: encodeObjectId(`urn:dx:item:${uniqueId('bulk')}`),
  }));
  const users = Array.from({ length: count }, () => ({ type: 'user', id: uniqueId('user') }));
  const zedToken = await client.writeRelationships(
    items.map((resource, index) => ({
      operation: 'touch' as const,
      relationship: {
        resource,
        relation: 'direct_viewer',
        subject: users[index] as BulkCheckItem['subject'],
      },
    })),
  );
  const check = (itemIndex: number, userIndex: number): BulkCheckItem => ({
    resource: items[itemIndex] as BulkCheckItem['resource'],
    permission: 'viewer',
    subject: users[userIndex] as BulkCheckItem['subject'],
  });
  return { check, zedToken };
}

describe('SpiceDBClient.checkBulkPermissions against the real SpiceDB', () => {
  it('answers each item in the items’ order, as CheckPermission answers it, at the call’s revision', async () => {
    const { check, zedToken } = await viewers(5);
    // Each user on their own item (allowed) and on the next one (denied), interleaved.
    const items = [0, 1, 2, 3, 4].flatMap((index) => [check(index, index), check((index + 1) % 5, index)]);
    const consistency = { atLeastAsFresh: zedToken };

    const answers = await client.checkBulkPermissions(items, consistency);

    const singles = await Promise.all(items.map((item) => client.checkPermission({ ...item, consistency })));
    expect(answers.map((answer) => 'allowed' in answer && answer.allowed)).toEqual(
      items.map((_, index) => index % 2 === 0),
    );
    expect(answers.map((answer) => 'allowed' in answer && answer.allowed)).toEqual(
      singles.map((single) => single.allowed),
    );
    const revisions = new Set(answers.map((answer) => 'checkedAt' in answer && answer.checkedAt));
    expect(revisions.size).toBe(1);
    expect([...revisions][0]).toEqual(expect.any(String));
  });

  it('answers an item SpiceDB cannot evaluate with its own error, and the others with their results', async () => {
    const { check, zedToken } = await viewers(2);
    const answers = await client.checkBulkPermissions(
      [check(0, 0), { ...check(1, 1), permission: 'no_such_permission' }, check(1, 1)],
      { atLeastAsFresh: zedToken },
    );
    expect(answers[0]).toMatchObject({ allowed: true });
    expect(answers[1]).toBeInstanceOf(SpiceDBError);
    expect(answers[1]).toMatchObject({ operation: 'CheckBulkPermissions', code: 9 });
    expect(answers[2]).toMatchObject({ allowed: true });
  });

  it('fails the whole call at a revision SpiceDB does not know', async () => {
    const { check } = await viewers(2);
    const call = client.checkBulkPermissions([check(0, 0), check(1, 1)], { atLeastAsFresh: 'Z2FyYmFnZQ==' });
    await expect(call).rejects.toBeInstanceOf(SpiceDBError);
    await expect(call).rejects.toMatchObject({ code: 3, message: expect.stringMatching(/revision/) });
  });

  it('fails closed with SpiceDBUnavailableError when SpiceDB refuses the key', async () => {
    const { check } = await viewers(1);
    const impostor = new SpiceDBClient({ ...testSpiceDB(), token: 'not-the-key', transport: 'plaintext' });
    try {
      await expect(
        impostor.checkBulkPermissions([check(0, 0), check(0, 0)], { minimizeLatency: true }),
      ).rejects.toBeInstanceOf(SpiceDBUnavailableError);
    } finally {
      impostor.close();
    }
  });
});
