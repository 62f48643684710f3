import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RelationshipUpdate } from '../../../src/spicedb/client.js';
import { encodeObjectId } from '../../../src/spicedb/object-id.js';
import type { OwnSpiceDB } from '../controller/support/harness.js';
import { uniqueId } from '../support/cluster.js';
import type { DecisionServiceUnderTest } from './support/decision-service.js';
import { apiCheck, startServiceOnOwnSpiceDB } from './support/service-on-own-spicedb.js';
import type { ServiceOnOwnSpiceDB } from './support/service-on-own-spicedb.js';

// A SpiceDB of this file's own, so that the Watch's next message after the seeding write is that write: the
// checks then run at least as fresh as it (the revision barrier), one consistency for all of them. One SpiceDB
// call at a time, so that checks arriving while it is busy wait for it and go out together whatever the
// machine's timing (the default allows 4).
let own: ServiceOnOwnSpiceDB;
let spicedb: OwnSpiceDB;
let service: DecisionServiceUnderTest;

beforeAll(async () => {
  own = await startServiceOnOwnSpiceDB('check-batching', {
    checkBatch: { enabled: true, maxItems: 100, concurrency: 1 },
  });
  ({ spicedb, service } = own);
});

afterAll(() => own?.stop());

async function batchSizes(): Promise<{ calls: number; checks: number; alone: number }> {
  const metrics = await service.metrics.metrics();
  const value = (pattern: RegExp) => Number(metrics.match(pattern)?.[1] ?? Number.NaN);
  return {
    calls: value(/^policygrant_decision_check_batch_size_count (\d+)/m),
    checks: value(/^policygrant_decision_check_batch_size_sum (\d+)/m),
    alone: value(/^policygrant_decision_check_batch_size_bucket\{le="1"\} (\d+)/m),
  };
}

describe('concurrent checks batched into CheckBulkPermissions against the real SpiceDB', () => {
  it('answers 50 distinct checks at once exactly as single checks do, in calls of more than one check', async () => {
    // 25 users, each granted api on an item of their own; each is checked on it (allowed) and on the next
    // user's item (denied).
    const users = Array.from({ length: 25 }, () => uniqueId('user'));
    const items = users.map(() => `urn:dx:item:${uniqueId('batched')}`);
    const grants: RelationshipUpdate[] = users.map((user, index) => ({
      operation: 'touch',
      relationship: {
        resource: { type: 'resource', id: encodeObjectId(items[index] as string) },
        relation: 'api_consumer',
        subject: { type: 'user', id: user },
        expiresAt: new Date(Date.now() + 3_600_000),
      },
    }));
    const zedToken = await service.afterWatchDelivers(() => spicedb.client.writeRelationships(grants));
    const checks = users.flatMap((user, index) => [
      { body: apiCheck(user, items[index] as string), seeded: true },
      { body: apiCheck(user, items[(index + 1) % items.length] as string), seeded: false },
    ]);
    const before = await batchSizes();

    const answers = await Promise.all(checks.map(({ body }) => service.check(body)));

    const singles = await Promise.all(
      checks.map(({ body }) =>
        spicedb.client.checkPermission({
          resource: { type: 'resource', id: encodeObjectId(body.resource_id) },
          permission: 'api_consumer',
          subject: { type: 'user', id: body.subject_id },
          consistency: { atLeastAsFresh: zedToken },
        }),
      ),
    );
    expect(answers.map(({ status }) => status)).toEqual(checks.map(() => 200));
    expect(answers.map(({ body }) => body.result.allowed)).toEqual(checks.map(({ seeded }) => seeded));
    expect(answers.map(({ body }) => body.result.allowed)).toEqual(singles.map(({ allowed }) => allowed));
    expect(answers.map(({ body }) => body.result.subject)).toEqual(
      checks.map(({ body }) => ({ type: 'user', id: body.subject_id })),
    );
    const after = await batchSizes();
    // Every check went to SpiceDB through the batcher, in fewer calls than checks: some carried several.
    expect(after.checks - before.checks).toBe(checks.length);
    expect(after.calls - before.calls).toBeLessThan(checks.length);
    expect(after.calls - before.calls - (after.alone - before.alone)).toBeGreaterThan(0);
  });
});
