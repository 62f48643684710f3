import { describe, expect, it } from 'vitest';
import { CatalogItemReconciler } from '../../../../src/controller/catalog-items/catalog-item-reconciler.js';
import { KeyedMutex } from '../../../../src/controller/keyed-mutex.js';
import { tupleKey } from '../../../../src/verdict/tuple-key.js';
import { silentLogger } from '../../../../src/runtime/logger.js';
import { encodeObjectId } from '../../../../src/spicedb/object-id.js';
import {
  catalogItem,
  consumerTuple,
  FakeRelationshipStore,
  ITEM_OBJECT_ID,
  ORG_A,
  ORG_B,
  OWNER,
  testCluster,
  USER,
} from '../support/fakes.js';

const owner = (type: string, id: string, objectId = ITEM_OBJECT_ID) =>
  tupleKey({ resource: { type: 'resource', id: objectId }, relation: 'owner', subject: { type, id } });

function setUp() {
  const test = testCluster({ items: [catalogItem('weather')] });
  const store = new FakeRelationshipStore();
  const reconciler = new CatalogItemReconciler({
    cluster: test.cluster,
    store,
    mutex: new KeyedMutex(),
    itemObjectTypes: ['resource'],
    logger: silentLogger,
    onSpiceDBError: () => undefined,
  });
  return { ...test, store, reconciler };
}

describe('CatalogItemReconciler', () => {
  it("writes the item's owner user and organisation", async () => {
    const { reconciler, store } = setUp();
    await reconciler.reconcile('weather');
    expect(store.keys()).toEqual([owner('organization', ORG_A), owner('user', OWNER)]);
  });

  it('replaces the owners when they change, and leaves other relations of the item alone', async () => {
    const { reconciler, store, items } = setUp();
    store.seed(consumerTuple());
    await reconciler.reconcile('weather');
    items.put(catalogItem('weather', { ownerId: USER, organisationId: ORG_B }));
    await reconciler.reconcile('weather');
    expect(store.keys()).toEqual(
      [owner('organization', ORG_B), owner('user', USER), tupleKey(consumerTuple())].sort(),
    );
  });

  it('removes the owners of an item id that became ambiguous, and restores them once it is not', async () => {
    const { reconciler, store, items } = setUp();
    await reconciler.reconcile('weather');
    items.put(catalogItem('twin'));
    await reconciler.reconcile('twin');
    expect(store.keys()).toEqual([]);
    items.remove('twin');
    await reconciler.reconcile('twin');
    expect(store.keys()).toHaveLength(2);
  });

  it('cleans the old item id when a CatalogItem changes its itemId, or is deleted', async () => {
    const { reconciler, store, items } = setUp();
    await reconciler.reconcile('weather');
    items.put(catalogItem('weather', { itemId: 'urn:dx:item:renamed' }));
    await reconciler.reconcile('weather');
    const renamed = encodeObjectId('urn:dx:item:renamed');
    expect(store.keys()).toEqual([owner('organization', ORG_A, renamed), owner('user', OWNER, renamed)]);
    items.remove('weather');
    await reconciler.reconcile('weather');
    expect(store.keys()).toEqual([]);
  });

  it('writes nothing when the owners are already right', async () => {
    const { reconciler, store } = setUp();
    await reconciler.reconcile('weather');
    await reconciler.reconcile('weather');
    expect(store.writeCalls).toHaveLength(1);
  });
});
