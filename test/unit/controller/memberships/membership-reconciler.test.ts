import { describe, expect, it } from 'vitest';
import type { Membership, MembershipSpec } from '../../../../src/api/v1alpha1/index.js';
import { projectMembership } from '../../../../src/controller/memberships/membership-projection.js';
import { ProjectedView } from '../../../../src/controller/projected/projected-view.js';
import { membershipKind } from '../../../../src/controller/memberships/membership-projection.js';
import { membershipCacheTransform } from '../../../../src/controller/memberships/cached-membership.js';
import { InternPool } from '../../../../src/runtime/index.js';
import { tupleKey } from '../../../../src/verdict/tuple-key.js';
import { SpiceDBUnavailableError } from '../../../../src/spicedb/errors.js';
import {
  ACL_NAMESPACE,
  FakeObjectWriter,
  FakeRelationshipStore,
  membership,
  MemoryStore,
  NOW,
  OTHER_USER,
  projectionMachine,
} from '../support/fakes.js';

const signal = new AbortController().signal;
const keyOf = (name: string) => `${ACL_NAMESPACE}/${name}`;
const keysOf = (spec: Partial<MembershipSpec>) => projectMembership(membership('x', spec).spec).map(tupleKey);

function setUp(...objects: Membership[]) {
  // Cached as the controller caches them: the reconciler reads compact records.
  const cache = new MemoryStore(objects, membershipCacheTransform(new InternPool()));
  const kind = new ProjectedView(cache, membershipKind);
  const store = new FakeRelationshipStore();
  const writer = new FakeObjectWriter(cache);
  let trusted = true;
  const machine = projectionMachine(kind, store, writer, { now: () => NOW, trustStatus: () => trusted });
  const { projector, reconciler, deleted: rechecked, spiceDBErrors } = machine;
  const reconcile = (name: string) => reconciler.reconcile(keyOf(name), signal);
  const reasonOf = (name: string) => cache.get(keyOf(name))?.status?.conditions?.[0]?.reason;
  const change = (name: string, spec: Partial<MembershipSpec>, metadata: Membership['metadata'] = {}) => {
    const current = cache.get(keyOf(name)) as Membership;
    const generation = (current.metadata.generation ?? 1) + 1;
    cache.put({
      ...current,
      metadata: { ...current.metadata, generation, ...metadata },
      spec: { ...current.spec, ...spec },
    });
  };
  const distrust = () => (trusted = false);
  return { cache, store, writer, projector, rechecked, spiceDBErrors, reconcile, reasonOf, change, distrust };
}

describe('the Membership reconciler', () => {
  it('adds the finalizer, writes the member tuple and says Projected, then writes nothing more', async () => {
    const { store, writer, reconcile, reasonOf, cache } = setUp(membership('m'));
    await reconcile('m');

    expect(writer.calls).toEqual(['addFinalizer', 'updateStatus']);
    expect(store.keys()).toEqual(keysOf({}));
    expect(reasonOf('m')).toBe('Projected');
    expect(cache.get(keyOf('m'))?.status?.zedToken).toBe('token-1');

    await reconcile('m');
    expect(store.writeCalls).toHaveLength(1);
    expect(writer.calls).toHaveLength(2);
  });

  it('deletes the tuple of a removed membership and says Removed', async () => {
    const { store, reconcile, reasonOf, change } = setUp(membership('m'));
    await reconcile('m');
    change('m', { removedAt: '2026-06-01T11:00:00Z' });
    await reconcile('m');

    expect(store.keys()).toEqual([]);
    expect(reasonOf('m')).toBe('Removed');
  });

  it('keeps a group’s ownership while another member remains', async () => {
    const group = { groupId: 'analysts' };
    const { store, reconcile, change, rechecked } = setUp(
      membership('a', group),
      membership('b', { ...group, userId: OTHER_USER }),
    );
    await reconcile('a');
    await reconcile('b');
    const [, owner] = keysOf(group);

    change('a', { removedAt: '2026-06-01T11:00:00Z' });
    await reconcile('a');
    expect(store.keys()).toEqual(keysOf({ ...group, userId: OTHER_USER }).sort());

    change('b', { removedAt: '2026-06-01T11:00:00Z' });
    await reconcile('b');
    expect(store.keys()).toEqual([]);
    expect(rechecked.flat()).toContain(owner);
  });

  it('deletes the tuples of a membership being deleted before it lets the object go', async () => {
    const { store, writer, reconcile, change, cache } = setUp(membership('m'));
    await reconcile('m');
    change('m', {}, { deletionTimestamp: NOW });
    await reconcile('m');

    expect(store.keys()).toEqual([]);
    expect(writer.calls.at(-1)).toBe('removeFinalizer');
    expect(cache.get(keyOf('m'))).toBeUndefined();
    await expect(reconcile('m')).resolves.toBeUndefined();
  });

  it('shows a failing projection on the object and throws, so the queue retries with backoff', async () => {
    const { store, reconcile, reasonOf, cache, spiceDBErrors } = setUp(membership('m'));
    store.failNextWrite = new SpiceDBUnavailableError('WriteRelationships', 14, 'connection refused');

    await expect(reconcile('m')).rejects.toBeInstanceOf(SpiceDBUnavailableError);
    expect(reasonOf('m')).toBe('ProjectionFailed');
    expect(cache.get(keyOf('m'))?.status?.conditions?.[0]?.message).toContain('connection refused');
    expect(spiceDBErrors).toHaveLength(1);

    await reconcile('m');
    expect(reasonOf('m')).toBe('Projected');
    expect(store.keys()).toEqual(keysOf({}));
  });

  it('believes a current status after a restart, but writes again once SpiceDB may have lost data', async () => {
    const first = setUp(membership('m'));
    await first.reconcile('m');
    const written = first.cache.get(keyOf('m')) as Membership;

    const restarted = setUp(written);
    await restarted.reconcile('m');
    expect(restarted.store.writeCalls).toEqual([]);

    const recovered = setUp(written);
    recovered.distrust();
    await recovered.reconcile('m');
    expect(recovered.store.keys()).toEqual(keysOf({}));
  });

  it('does nothing for a membership that is gone', async () => {
    const { store, reconcile } = setUp();
    await expect(reconcile('gone')).resolves.toBeUndefined();
    expect(store.writeCalls).toEqual([]);
  });
});
