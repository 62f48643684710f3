import { describe, expect, it } from 'vitest';
import { createMetricsRegistry } from '../../../src/observability/metrics.js';
import { silentLogger } from '../../../src/runtime/logger.js';
import { GrantMetrics } from '../../../src/controller/controller-metrics.js';
import { DriftResync, ResyncCancelledError } from '../../../src/controller/drift-resync.js';
import { RELATIONSHIPS_FINALIZER } from '../../../src/api/v1alpha1/index.js';
import { KeyedMutex } from '../../../src/controller/keyed-mutex.js';
import { itemOwners } from '../../../src/controller/catalog-items/item-owners.js';
import { delegationKind } from '../../../src/controller/delegations/delegation-projection.js';
import { projectMembership } from '../../../src/controller/memberships/membership-projection.js';
import { membershipCacheTransform } from '../../../src/controller/memberships/cached-membership.js';
import { InternPool } from '../../../src/runtime/index.js';
import { ProjectedView } from '../../../src/controller/projected/projected-view.js';
import { membershipKind } from '../../../src/controller/memberships/membership-projection.js';
import { tupleKey } from '../../../src/verdict/tuple-key.js';
import type { Delegation, Membership, PolicyGrant } from '../../../src/api/v1alpha1/index.js';
import type { Relationship } from '../../../src/spicedb/client.js';
import { SpiceDBUnavailableError } from '../../../src/spicedb/errors.js';
import {
  consumerTuple,
  FakeRelationshipStore,
  membership,
  MemoryStore,
  ITEM_OBJECT_ID,
  NOW,
  OTHER_USER,
  OWNER,
  ORG_A,
  ORG_B as OTHER_ORG,
  policyGrant,
  registry,
  testGrantKind,
  testCluster,
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

/** A grant its reconcile has seen: it holds the finalizer, so the resync may write its tuples. */
function reconciled<T extends PolicyGrant | Membership>(object: T): T {
  return { ...object, metadata: { ...object.metadata, finalizers: [RELATIONSHIPS_FINALIZER] } };
}

/** A grant reconciled once: the finalizer and a status, so the resync may write its tuples. */
function reconciledGrant(grant: PolicyGrant): PolicyGrant {
  return { ...reconciled(grant), status: { observedGeneration: 1, ...grant.status } };
}

function setUp(
  grants: PolicyGrant[],
  batchSize = 1_000,
  unreconciled: PolicyGrant[] = [],
  memberships: Membership[] = [],
) {
  const test = testCluster({ grants: [...grants.map(reconciledGrant), ...unreconciled] });
  const store = new FakeRelationshipStore(batchSize);
  const metricsRegistry = createMetricsRegistry();
  const removed: string[][] = [];
  const resync = new DriftResync({
    store,
    kinds: [
      testGrantKind(test.cluster),
      itemOwners(test.cluster),
      new ProjectedView(
        new MemoryStore(memberships, membershipCacheTransform(new InternPool())),
        membershipKind,
      ),
      new ProjectedView(
        new MemoryStore<Delegation>([]),
        delegationKind({ registry, ownerOf: () => undefined }),
      ),
    ],
    mutex: new KeyedMutex(),
    metrics: new GrantMetrics(metricsRegistry, () => test.cluster.allGrants()),
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

  it('writes no tuple of a grant born with its finalizer but not reconciled yet (no status)', async () => {
    const born = policyGrant('g', {}, { finalizers: [RELATIONSHIPS_FINALIZER] });
    const { store, resync } = setUp([], 1_000, [born]);
    store.seed(...owners);
    expect(await resync.run()).toMatchObject({ desired: 3, missing: 0, orphan: 0 });
    expect(store.keys()).toEqual(owners.map(tupleKey).sort());
  });

  it('writes no tuple of a grant without its finalizer, and keeps one it finds', async () => {
    // Deleting such a grant would not remove the tuple: its reconcile writes it, finalizer first.
    const { store, resync } = setUp([], 1_000, [policyGrant('g')]);
    store.seed(...owners);
    expect(await resync.run()).toMatchObject({ desired: 3, missing: 0, orphan: 0 });
    expect(store.keys()).toEqual(owners.map(tupleKey).sort());

    store.seed(consumerTuple());
    expect(await resync.run()).toMatchObject({ missing: 0, orphan: 0 });
    expect(store.keys()).toContain(tupleKey(consumerTuple()));
  });

  it('rewrites a tuple whose expiration differs from its grant', async () => {
    const { store, resync } = setUp([policyGrant('g')]);
    store.seed(...owners, consumerTuple(USER, 'api_consumer', new Date('2100-01-01T00:00:00Z')));
    expect(await resync.run()).toMatchObject({ missing: 1, orphan: 0 });
    expect(store.tuples.get(tupleKey(consumerTuple()))?.expiresAt).toEqual(consumerTuple().expiresAt);
  });

  it('makes sure of the schema (and the term’s fence) before it reads anything', async () => {
    const { store, resync } = setUp([policyGrant('g')]);
    let readsBeforeSchema: number | undefined;
    const ensureSchema = store.ensureSchema.bind(store);
    store.ensureSchema = () => {
      readsBeforeSchema ??= store.readCalls.length;
      return ensureSchema();
    };
    await resync.run();
    expect(readsBeforeSchema).toBe(0);
    expect(store.readCalls.length).toBeGreaterThan(0);
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
    const { store, resync } = setUp([], 100, [], [reconciled(membership('m'))]);
    const orphans = Array.from({ length: 250 }, (_, index) => consumerTuple(`user-${index}`));
    const unmanaged = {
      resource: { type: 'resource', id: ITEM_OBJECT_ID },
      relation: 'editor',
      subject: { type: 'user', id: USER },
    };
    const [member] = projectMembership(membership('m').spec) as [Relationship];
    store.seed(...orphans, unmanaged, member);

    expect(await resync.run()).toMatchObject({ orphan: 250 });
    expect(store.keys()).toEqual([member, unmanaged, ...owners].map(tupleKey).sort());
    expect(
      store.readCalls.map((call) => `${call.filter.resourceType}#${call.filter.relation}`).sort(),
    ).toEqual([
      'agent#owner',
      'group#member',
      'group#owner',
      'organization#member',
      'resource#api_consumer',
      'resource#editor_delegate',
      'resource#file_consumer',
      'resource#owner',
      'resource#querier_delegate',
      'resource#sub_consumer',
      'resource#viewer_delegate',
      'user#agent',
    ]);
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

  it('writes no further batch once leadership is lost in the middle of the repairs', async () => {
    const grants = ['a', 'b', 'c', 'd'].map((name) => policyGrant(name, { userId: `user-${name}` }));
    const { store, resync } = setUp(grants, 2);
    store.seed(...owners);
    let leading = true;
    const write = store.writeRelationshipsInBatches.bind(store);
    store.writeRelationshipsInBatches = async (updates) => {
      const token = await write(updates);
      leading = false; // the lease is lost while the first batch is in flight
      return token;
    };
    await expect(resync.run(() => !leading)).rejects.toBeInstanceOf(ResyncCancelledError);
    expect(store.writeCalls).toHaveLength(1);
    expect(store.keys()).toHaveLength(owners.length + 2);
  });

  it('repairs GROUP tuples: organisation members, one per allowed organisation and access type', async () => {
    const group = policyGrant('group', {
      policyType: 'GROUP',
      userId: undefined,
      constraints: {
        access: [{ accessType: 'api' }, { accessType: 'file' }],
        subjects: { allowedOrgIds: [ORG_A] },
      },
    });
    const { store, resync } = setUp([group]);
    const member = (relation: string, organisation: string): Relationship => ({
      resource: { type: 'resource', id: ITEM_OBJECT_ID },
      relation,
      subject: { type: 'organization', id: organisation, relation: 'member' },
      expiresAt: consumerTuple().expiresAt,
    });
    const orphan = { ...member('api_consumer', OTHER_ORG) };
    store.seed(...owners, member('api_consumer', ORG_A), orphan);

    expect(await resync.run()).toMatchObject({ missing: 1, orphan: 1 });
    expect(store.keys()).toEqual(
      [...owners, member('api_consumer', ORG_A), member('file_consumer', ORG_A)].map(tupleKey).sort(),
    );
  });

  it('fails when a write fails in the middle of the run, keeping what earlier batches repaired', async () => {
    const { store, resync } = setUp([], 1);
    store.seed(consumerTuple('a'), consumerTuple('b'));
    const write = store.writeRelationshipsInBatches.bind(store);
    let calls = 0;
    store.writeRelationshipsInBatches = async (updates) => {
      calls += 1;
      if (calls === 2) throw new SpiceDBUnavailableError('WriteRelationships', 14, 'connection refused');
      return write(updates);
    };
    await expect(resync.run()).rejects.toBeInstanceOf(SpiceDBUnavailableError);
    expect(store.keys()).toEqual([tupleKey(consumerTuple('b'))]);
    expect(await resync.run()).toMatchObject({ orphan: 1 });
    expect(store.keys()).toEqual(owners.map(tupleKey).sort());
  });

  it('stops between pages when cancelled', async () => {
    const { store, resync } = setUp([], 1);
    store.seed(consumerTuple('a'), consumerTuple('b'));
    await expect(resync.run(() => true)).rejects.toBeInstanceOf(ResyncCancelledError);
    expect(store.writeCalls).toEqual([]);
  });
});

describe('the resync of memberships', () => {
  const groupMember = membership('g', { groupId: 'analysts' });
  const [orgTuple, groupTuple, groupOwnerTuple] = [
    ...projectMembership(membership('o').spec),
    ...projectMembership(groupMember.spec),
  ] as [Relationship, Relationship, Relationship];

  it('writes the missing tuples of members that hold the finalizer, and deletes orphan membership tuples', async () => {
    const stranger = projectMembership(membership('x', { userId: OTHER_USER }).spec);
    const { store, resync, removed } = setUp(
      [],
      1_000,
      [],
      [reconciled(membership('o')), reconciled(groupMember)],
    );
    store.seed(...owners, ...stranger);

    expect(await resync.run()).toMatchObject({ missing: 3, orphan: 1 });
    expect(store.keys()).toEqual([...owners, orgTuple, groupTuple, groupOwnerTuple].map(tupleKey).sort());
    expect(removed).toEqual([stranger.map(tupleKey)]);
  });

  it('writes nothing for a membership without its finalizer, a removed one or one being deleted', async () => {
    const { store, resync } = setUp(
      [],
      1_000,
      [],
      [
        membership('o'),
        reconciled(membership('g', { groupId: 'analysts', removedAt: '2026-05-01T00:00:00Z' })),
        reconciled(membership('d', { userId: OTHER_USER }, { deletionTimestamp: new Date(NOW) })),
      ],
    );
    store.seed(...owners, groupTuple, groupOwnerTuple);

    expect(await resync.run()).toMatchObject({ missing: 0, orphan: 2 });
    expect(store.keys()).toEqual(owners.map(tupleKey).sort());
  });

  it('keeps a group’s ownership while one member remains, and leaves grant tuples alone', async () => {
    const removedMember = membership('r', {
      groupId: 'analysts',
      userId: OTHER_USER,
      removedAt: '2026-05-01T00:00:00Z',
    });
    const { store, resync } = setUp(
      [policyGrant('grant')],
      1_000,
      [],
      [reconciled(groupMember), reconciled(removedMember)],
    );
    const [removedTuple] = projectMembership(removedMember.spec) as [Relationship];
    store.seed(...owners, consumerTuple(), groupTuple, groupOwnerTuple, removedTuple);

    expect(await resync.run()).toMatchObject({ missing: 0, orphan: 1 });
    expect(store.keys()).toEqual(
      [...owners, consumerTuple(), groupTuple, groupOwnerTuple].map(tupleKey).sort(),
    );
  });
});
