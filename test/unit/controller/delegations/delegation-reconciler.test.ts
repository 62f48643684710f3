import { describe, expect, it } from 'vitest';
import type { Delegation } from '../../../../src/api/v1alpha1/index.js';
import { delegationKind } from '../../../../src/controller/delegations/delegation-projection.js';
import { ProjectedView } from '../../../../src/controller/projected/projected-view.js';
import {
  ACL_NAMESPACE,
  FakeObjectWriter,
  FakeRelationshipStore,
  MemoryStore,
  NOW,
  projectionMachine,
  registry,
  USER,
} from '../support/fakes.js';

const KEY = `${ACL_NAMESPACE}/d`;
const DELEGATED = 'resource:urn=3Adx=3Aitem=3A1#querier_delegate@agent:urn=3Aagent=3A7';
const signal = new AbortController().signal;
const inHours = (hours: number) => new Date(NOW.getTime() + hours * 3_600_000).toISOString();

function delegation(expiryTime: string, generation = 1): Delegation {
  return {
    apiVersion: 'acl.policygrant.dev/v1alpha1',
    kind: 'Delegation',
    metadata: { name: 'd', namespace: ACL_NAMESPACE, generation, resourceVersion: '1' },
    spec: { agentId: 'urn:agent:7', ownerId: USER, itemId: 'urn:dx:item:1', relation: 'querier', expiryTime },
  };
}

function setUp(object: Delegation) {
  const cache = new MemoryStore([object]);
  const kind = new ProjectedView(cache, delegationKind({ registry, ownerOf: () => USER, now: () => NOW }));
  const store = new FakeRelationshipStore();
  const { reconciler } = projectionMachine(kind, store, new FakeObjectWriter(cache), { now: () => NOW });
  return { cache, store, reconcile: () => reconciler.reconcile(KEY, signal) };
}

describe('the Delegation reconciler', () => {
  it('writes the new expiration at once when a delegation is extended', async () => {
    const { cache, store, reconcile } = setUp(delegation(inHours(1)));
    await reconcile();
    const written = cache.get(KEY) as Delegation;
    cache.put({ ...written, ...delegation(inHours(5), 2), metadata: { ...written.metadata, generation: 2 } });
    await reconcile();
    expect(store.tuples.get(DELEGATED)?.expiresAt).toEqual(new Date(inHours(5)));
  });
});
