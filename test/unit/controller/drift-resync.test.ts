import { describe, expect, it } from 'vitest';
import { createMetricsRegistry } from '../../../src/observability/metrics.js';
import { silentLogger } from '../../../src/runtime/logger.js';
import { GrantMetrics } from '../../../src/controller/controller-metrics.js';
import { DriftResync, ResyncCancelledError } from '../../../src/controller/drift-resync.js';
import { KeyedMutex } from '../../../src/controller/keyed-mutex.js';
import { managedRelations } from '../../../src/controller/managed-relations.js';
import { tupleKey } from '../../../src/controller/tuple-key.js';
import type { PolicyGrant } from '../../../src/api/v1alpha1/index.js';
import type { Relationship } from '../../../src/spicedb/client.js';
import {
  consumerTuple,
  FakeRelationshipStore,
  ITEM_OBJECT_ID,
  NOW,
  OTHER_USER,
  OWNER,
  ORG_A,
  policyGrant,
  registry,
  testWorld,
  USER,
} from './support/fakes.js';

const ownerUser: Relationship = {
  resource: { type: 'resource', id: ITEM_OBJECT_ID },
  relation: 'owner',
  subject: { type: 'user', id: OWNER },
};
const ownerOrganisation: Relationship = {
  resource: { type: 'resource', id: ITEM_OBJECT_ID },
  relation: 'owner',
  subject: { type: 'organization', id: ORG_A },
};
const owners = [ownerUser, ownerOrganisation];

function setUp(grants: PolicyGrant[], batchSize = 1_000) {
  const test = testWorld({ grants });
  const store = new FakeRelationshipStore(batchSize);
  const metricsRegistry = createMetricsRegistry();
  const removed: string[][] = [];
  const resync = new DriftResync({
    store,
    world: test.world,
    relations: managedRelations(registry),
    mutex: new KeyedMutex(),
    metrics: new GrantMetrics(metricsRegistry, () => test.world.allGrants()),
    logger: silentLogger,
    onTuplesDeleted: (keys) => removed.push(keys),
    batchSize,
    now: () => NOW,
  });
  const drift = async (direction: string) =>
    (await metricsRegistry.getSingleMetric('policygrant_drift_repaired_total')?.get())?.values.find(
      (value) => value.labels.direction === direction,
    )?.value;
  return { ...test, store, resync, removed, drift };
}

describe('the resync', () => {
  it('writes what is missing and deletes orphans, counting both', async () => {
    const { store, resync, drift, removed } = setUp([policyGrant('g')]);
    const orphan = consumerTuple(OTHER_USER);
    store.seed(orphan, ownerUser);

    const report = await resync.run();

    expect(store.keys()).toEqual([...owners, consumerTuple()].map(tupleKey).sort());
    expect(report).toMatchObject({ examined: 2, desired: 3, missing: 2, orphan: 1 });
    expect(await drift('missing')).toBe(2);
    expect(await drift('orphan')).toBe(1);
    expect(removed).toEqual([[tupleKey(orphan)]]);
  });

  it('rewrites a tuple whose expiration differs from its grant', async () => {
    const { store, resync } = setUp([policyGrant('g')]);
    store.seed(...owners, consumerTuple(USER, 'api_consumer', new Date('2100-01-01T00:00:00Z')));
    expect(await resync.run()).toMatchObject({ missing: 1, orphan: 0 });
    expect(store.tuples.get(tupleKey(consumerTuple()))?.expiresAt).toEqual(consumerTuple().expiresAt);
  });

  it('writes nothing when SpiceDB already agrees', async () => {
    const { store, resync } = setUp([policyGrant('g')]);
    store.seed(...owners, consumerTuple());
    expect(await resync.run()).toMatchObject({ missing: 0, orphan: 0 });
    expect(store.writeCalls).toEqual([]);
  });

  it('removes the tuples of revoked, expired and unauthorised grants', async () => {
    const grants = [
      policyGrant('revoked', { revokedAt: '2026-05-01T00:00:00Z' }),
      policyGrant('expired', { userId: OTHER_USER, expiryTime: '2026-05-01T00:00:00Z' }),
      policyGrant(
        'elsewhere',
        { constraints: { access: [{ accessType: 'file' }] } },
        { namespace: 'unbound' },
      ),
    ];
    const { store, resync } = setUp(grants);
    store.seed(...owners, consumerTuple(), consumerTuple(OTHER_USER), consumerTuple(USER, 'file_consumer'));
    expect(await resync.run()).toMatchObject({ orphan: 3 });
    expect(store.keys()).toEqual(owners.map(tupleKey).sort());
  });

  it('reads only the managed relations, a page at a time, and writes in calls within the limit', async () => {
    const { store, resync } = setUp([], 100);
    const orphans = Array.from({ length: 250 }, (_, index) => consumerTuple(`user-${index}`));
    const unmanaged = {
      resource: { type: 'resource', id: ITEM_OBJECT_ID },
      relation: 'editor',
      subject: { type: 'user', id: USER },
    };
    const membership = {
      resource: { type: 'organization', id: ORG_A },
      relation: 'member',
      subject: { type: 'user', id: USER },
    };
    store.seed(...orphans, unmanaged, membership);

    expect(await resync.run()).toMatchObject({ orphan: 250 });
    expect(store.keys()).toEqual([membership, unmanaged, ...owners].map(tupleKey).sort());
    expect(
      store.readCalls.map((call) => `${call.filter.resourceType}#${call.filter.relation}`).sort(),
    ).toEqual(['resource#api_consumer', 'resource#file_consumer', 'resource#owner', 'resource#sub_consumer']);
    expect(store.readCalls.every((call) => call.pageSize === 100)).toBe(true);
    // Deletes as pages fill up, then the two missing owners.
    expect(store.writeCalls.map((call) => call.length)).toEqual([100, 100, 50, 2]);
  });

  it('decides each repair again at the moment it is made: a grant created while reading keeps its tuple', async () => {
    const latecomer = policyGrant('late', { userId: OTHER_USER });
    const { store, resync, grants } = setUp([], 1);
    store.seed(...owners, consumerTuple(OTHER_USER));
    // The grant reaches the cache (and writes its tuple) after the resync computed what it wants.
    store.betweenPages = () => grants.put(latecomer);

    expect(await resync.run()).toMatchObject({ orphan: 0 });
    expect(store.keys()).toContain(tupleKey(consumerTuple(OTHER_USER)));
  });

  it('does not resurrect the tuple of a grant revoked while it was reading', async () => {
    const grant = policyGrant('g');
    const { store, resync, grants } = setUp([grant], 1);
    store.seed(ownerUser);
    store.betweenPages = () => grants.put(policyGrant('g', { revokedAt: '2026-05-01T00:00:00Z' }));

    expect(await resync.run()).toMatchObject({ missing: 1 }); // the organisation owner, not the revoked grant
    expect(store.keys()).not.toContain(tupleKey(consumerTuple()));
  });

  it('stops between pages when cancelled', async () => {
    const { store, resync } = setUp([], 1);
    store.seed(consumerTuple('a'), consumerTuple('b'));
    await expect(resync.run(() => true)).rejects.toBeInstanceOf(ResyncCancelledError);
    expect(store.writeCalls).toEqual([]);
  });
});
