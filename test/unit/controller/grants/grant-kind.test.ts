import { describe, expect, it } from 'vitest';
import type { PolicyGrant, PolicyGrantStatus } from '../../../../src/api/v1alpha1/index.js';
import { GrantMetrics } from '../../../../src/controller/controller-metrics.js';
import type { RecordedEvent } from '../../../../src/controller/event-recorder.js';
import { RELATIONSHIPS_FINALIZER } from '../../../../src/api/v1alpha1/index.js';
import { tupleKey } from '../../../../src/verdict/tuple-key.js';
import { encodeObjectId } from '../../../../src/spicedb/object-id.js';
import { createMetricsRegistry } from '../../../../src/observability/metrics.js';
import { KubeApiError } from '../../../../src/kube/api-error.js';
import { SpiceDBUnavailableError } from '../../../../src/spicedb/errors.js';
import {
  ACL_NAMESPACE,
  boundNamespace,
  catalogItem,
  consumerTuple,
  ITEM_OBJECT_ID,
  ORG_B,
  OTHER_USER,
  USER,
  FakeRelationshipStore,
  NOW,
  policyGrant,
  projectionMachine,
  testGrantKind,
  testCluster,
} from '../support/fakes.js';

const KEY = `${ACL_NAMESPACE}/g`;
const signal = new AbortController().signal;

/** The kube-apiserver as the reconciler writes to it: stores what it is sent, bumps resourceVersion. */
class FakeGrantWriter {
  readonly calls: string[] = [];
  conflictOnNextStatus = false;

  constructor(private readonly onWrite: (grant: PolicyGrant) => void) {}

  async setFinalizer(grant: PolicyGrant, present: boolean): Promise<PolicyGrant> {
    this.calls.push(present ? 'addFinalizer' : 'removeFinalizer');
    const finalizers = present ? [RELATIONSHIPS_FINALIZER] : [];
    return this.store({ ...grant, metadata: { ...grant.metadata, finalizers } });
  }

  async updateStatus(grant: PolicyGrant, status: PolicyGrantStatus): Promise<PolicyGrant> {
    this.calls.push('updateStatus');
    if (this.conflictOnNextStatus) {
      this.conflictOnNextStatus = false;
      throw new KubeApiError(409, 'Conflict', 'the object has been modified');
    }
    return this.store({ ...grant, status });
  }

  private store(grant: PolicyGrant): PolicyGrant {
    const stored = {
      ...grant,
      metadata: { ...grant.metadata, resourceVersion: String(Number(grant.metadata.resourceVersion) + 1) },
    };
    this.onWrite(stored);
    return stored;
  }
}

function setUp(grant: PolicyGrant, now = NOW) {
  const test = testCluster({ grants: [grant] });
  const store = new FakeRelationshipStore();
  const writer = new FakeGrantWriter((written) => test.grants.put(written));
  const events: RecordedEvent[] = [];
  const metricsRegistry = createMetricsRegistry();
  const kind = testGrantKind(test.cluster, {
    events: { record: async (_object, event) => void events.push(event) },
    metrics: new GrantMetrics(metricsRegistry, () => test.cluster.allGrants()),
  });
  const machine = projectionMachine(kind, store, writer, { now: () => now });
  const { lastWrites, reconciler, spiceDBErrors: spicedbErrors } = machine;
  const current = (): PolicyGrant => {
    const grant = test.grants.get(KEY);
    if (!grant) throw new Error(`${KEY} is not in the cache`);
    return grant;
  };
  return { ...test, store, lastWrites, writer, events, spicedbErrors, reconciler, current, metricsRegistry };
}

describe('the PolicyGrant reconciler', () => {
  it('adds the finalizer before writing, then projects, then writes the status once, with an Event', async () => {
    const { reconciler, writer, store, current, events } = setUp(policyGrant('g'));
    const result = await reconciler.reconcile(KEY, signal);

    expect(writer.calls).toEqual(['addFinalizer', 'updateStatus']);
    expect(current().metadata.finalizers).toEqual([RELATIONSHIPS_FINALIZER]);
    expect(store.keys()).toEqual([tupleKey(consumerTuple())]);
    expect(current().status).toMatchObject({ relationships: 1, zedToken: 'token-1', state: 'ACTIVE' });
    expect(events).toEqual([
      { type: 'Normal', reason: 'Projected', action: 'Project', note: '1 relationship written to SpiceDB' },
    ]);
    // Reconciled again just after expiry, however far away (the work queue waits long delays in steps).
    expect(result).toEqual({ requeueAfter: expect.any(Number) });
    expect((result as { requeueAfter: number }).requeueAfter).toBeGreaterThan(365 * 86_400_000);
  });

  it('writes neither SpiceDB nor the status when nothing changed', async () => {
    const { reconciler, writer, store, events } = setUp(policyGrant('g'));
    await reconciler.reconcile(KEY, signal);
    await reconciler.reconcile(KEY, signal);
    expect(writer.calls).toEqual(['addFinalizer', 'updateStatus']);
    expect(store.writeCalls).toHaveLength(1);
    expect(events).toHaveLength(1);
  });

  it('believes a status written for the current generation (a new leader rewrites nothing)', async () => {
    const first = setUp(policyGrant('g'));
    await first.reconciler.reconcile(KEY, signal);
    const second = setUp(first.current());
    second.store.seed(consumerTuple());
    await second.reconciler.reconcile(KEY, signal);
    expect(second.store.writeCalls).toEqual([]);
    expect(second.writer.calls).toEqual([]);
  });

  describe('after a leader change (no record of the last writes), a narrowing edit', () => {
    const edit = (grant: PolicyGrant, spec: Partial<PolicyGrant['spec']>): PolicyGrant => ({
      ...grant,
      metadata: { ...grant.metadata, generation: 2 },
      spec: { ...grant.spec, ...spec },
    });
    const onlyApi = { constraints: { access: [{ accessType: 'api' }] } };
    const apiAndFile = { constraints: { access: [{ accessType: 'api' }, { accessType: 'file' }] } };

    it('removes the tuples the status says were written and the grant no longer gives', async () => {
      const first = setUp(policyGrant('g', apiAndFile));
      await first.reconciler.reconcile(KEY, signal);
      expect(first.current().status?.projected).toEqual({
        resource: `resource:${ITEM_OBJECT_ID}`,
        relations: ['api_consumer', 'file_consumer'],
        subjects: [`user:${USER}`],
      });
      const second = setUp(edit(first.current(), onlyApi));
      second.store.seed(...first.store.tuples.values());
      await second.reconciler.reconcile(KEY, signal);
      expect(second.store.keys()).toEqual([tupleKey(consumerTuple())]);
      expect(second.current().status?.projected?.relations).toEqual(['api_consumer']);
    });

    it('to another user and item removes the old tuples there too', async () => {
      const first = setUp(policyGrant('g'));
      await first.reconciler.reconcile(KEY, signal);
      const otherItem = 'urn:dx:cat:item:rain-gauges';
      const second = setUp(edit(first.current(), { userId: OTHER_USER, itemId: otherItem }));
      second.items.put(catalogItem('rain', { itemId: otherItem }));
      second.store.seed(...first.store.tuples.values());
      await second.reconciler.reconcile(KEY, signal);
      expect(second.store.keys()).toEqual([
        `resource:${encodeObjectId(otherItem)}#api_consumer@user:${OTHER_USER}`,
      ]);
    });

    it('with no record in the status repairs the resource: what no grant accounts for goes, the rest stays', async () => {
      const first = setUp(policyGrant('g', apiAndFile));
      await first.reconciler.reconcile(KEY, signal);
      const { projected: _dropped, ...unrecorded } = first.current().status ?? {};
      const second = setUp({ ...edit(first.current(), onlyApi), status: unrecorded });
      second.grants.put(policyGrant('other', { userId: OTHER_USER, ...apiAndFile }));
      const unmanaged = { ...consumerTuple(), relation: 'editor', expiresAt: undefined };
      second.store.seed(
        ...first.store.tuples.values(),
        consumerTuple(OTHER_USER, 'file_consumer'),
        unmanaged,
      );
      await second.reconciler.reconcile(KEY, signal);
      expect(second.store.keys()).toEqual(
        [consumerTuple(), consumerTuple(OTHER_USER, 'file_consumer'), unmanaged].map(tupleKey).sort(),
      );
    });
  });

  describe('a grant born with the finalizer (the ACL API creates them so)', () => {
    const born = (spec: Partial<PolicyGrant['spec']> = {}) =>
      policyGrant('g', spec, { finalizers: [RELATIONSHIPS_FINALIZER] });

    it('is enforced without a finalizer patch and without reading SpiceDB', async () => {
      const { reconciler, writer, store, current } = setUp(born());
      await reconciler.reconcile(KEY, signal);
      expect(writer.calls).toEqual(['updateStatus']);
      expect(store.readCalls).toEqual([]);
      expect(store.keys()).toEqual([tupleKey(consumerTuple())]);
      expect(current().status?.conditions?.[0]).toMatchObject({ reason: 'Projected' });
    });

    it('withdrawn before any status (a leader wrote, then died): its tuples go, without reading SpiceDB', async () => {
      const revoked = born({ revokedAt: new Date(NOW.getTime() - 1_000).toISOString() });
      const { reconciler, store, current } = setUp(revoked);
      store.seed(consumerTuple());
      await reconciler.reconcile(KEY, signal);
      expect(store.keys()).toEqual([]);
      expect(store.readCalls).toEqual([]);
      expect(current().status?.conditions?.[0]).toMatchObject({ reason: 'Revoked' });
    });

    it('edited before any status: repairs its resource by reading, as a spec the leader wrote for may differ', async () => {
      const { reconciler, store } = setUp({ ...born(), metadata: { ...born().metadata, generation: 2 } });
      store.seed(consumerTuple(USER, 'file_consumer'));
      await reconciler.reconcile(KEY, signal);
      expect(store.readCalls.length).toBeGreaterThan(0);
      expect(store.keys()).toEqual([tupleKey(consumerTuple())]);
    });
  });

  it('waits for its own writes to reach the cache instead of deciding on the version they replaced', async () => {
    const { reconciler, writer, grants, current } = setUp(policyGrant('g'));
    const original = current();
    await reconciler.reconcile(KEY, signal);
    grants.put(original); // the cache has not seen our writes yet
    expect(await reconciler.reconcile(KEY, signal)).toBeUndefined();
    expect(writer.calls).toEqual(['addFinalizer', 'updateStatus']);
  });

  it('requeues at expiryTime, just after it', async () => {
    const { reconciler } = setUp(
      policyGrant('g', { expiryTime: new Date(NOW.getTime() + 5_000).toISOString() }),
    );
    expect(await reconciler.reconcile(KEY, signal)).toEqual({ requeueAfter: 5_100 });
  });

  it('reports a SpiceDB failure as ProjectionFailed, then throws it so that the runtime retries with backoff', async () => {
    const { reconciler, store, current, events, spicedbErrors } = setUp(policyGrant('g'));
    const outage = new SpiceDBUnavailableError('WriteRelationships', 14, 'connection refused');
    store.failNextWrite = outage;
    await expect(reconciler.reconcile(KEY, signal)).rejects.toBe(outage);
    expect(current().status?.conditions?.[0]).toMatchObject({
      reason: 'ProjectionFailed',
      message: outage.message,
    });
    expect(events).toEqual([expect.objectContaining({ type: 'Warning', reason: 'ProjectionFailed' })]);
    expect(spicedbErrors).toEqual([outage]);

    await reconciler.reconcile(KEY, signal);
    expect(current().status?.conditions?.[0]).toMatchObject({ reason: 'Projected' });
  });

  it('asks to be requeued when the status write meets a newer object (409)', async () => {
    const { reconciler, writer } = setUp(policyGrant('g'));
    writer.conflictOnNextStatus = true;
    expect(await reconciler.reconcile(KEY, signal)).toEqual({ requeue: true });
  });

  it('withdraws a revoked grant and records the revocation latency', async () => {
    const { reconciler, grants, store, current, events, metricsRegistry } = setUp(policyGrant('g'));
    await reconciler.reconcile(KEY, signal);
    grants.put({
      ...current(),
      spec: { ...current().spec, revokedAt: new Date(NOW.getTime() - 2_000).toISOString() },
    });
    expect(await reconciler.reconcile(KEY, signal)).toBeUndefined();
    expect(store.keys()).toEqual([]);
    expect(current().status).toMatchObject({ state: 'DELETED', relationships: 0, zedToken: 'token-2' });
    expect(events.map((event) => [event.type, event.reason])).toEqual([
      ['Normal', 'Projected'],
      ['Normal', 'Revoked'],
    ]);
    expect(await metricsRegistry.metrics()).toMatch(
      /^policygrant_enforcement_latency_seconds_sum{transition="revoked"} 2$/m,
    );
  });

  it('on deletion removes the tuples, then the finalizer', async () => {
    const { reconciler, grants, store, current, writer, lastWrites } = setUp(policyGrant('g'));
    await reconciler.reconcile(KEY, signal);
    grants.put({ ...current(), metadata: { ...current().metadata, deletionTimestamp: NOW } });
    await reconciler.reconcile(KEY, signal);
    expect(store.keys()).toEqual([]);
    expect(writer.calls.at(-1)).toBe('removeFinalizer');
    expect(current().metadata.finalizers).toEqual([]);
    expect(lastWrites.size).toBe(0);
  });

  it('cleans up after a grant that vanished without its finalizer', async () => {
    const { reconciler, grants, store } = setUp(policyGrant('g'));
    await reconciler.reconcile(KEY, signal);
    grants.remove(KEY);
    await reconciler.reconcile(KEY, signal);
    expect(store.keys()).toEqual([]);
  });

  it("writes the namespace's binding as the verdict reads it, and a rebinding alone is a status write", async () => {
    const grant = policyGrant('g', { itemId: 'urn:dx:item:missing' }, { namespace: 'team-b' });
    const { reconciler, writer, namespaces, grants } = setUp(grant);
    const status = () => grants.get('team-b/g')?.status;
    await reconciler.reconcile('team-b/g', signal);
    expect(status()).toMatchObject({ access: 'api', namespaceBinding: '<unbound>' });

    namespaces.put(boundNamespace('team-b', ORG_B));
    await reconciler.reconcile('team-b/g', signal);
    expect(writer.calls).toEqual(['addFinalizer', 'updateStatus', 'updateStatus']);
    expect(status()).toMatchObject({
      namespaceBinding: ORG_B,
      conditions: [expect.objectContaining({ reason: 'ItemNotFound' }), expect.anything()],
    });
  });

  it('gives a Warning event to policy refusals', async () => {
    const { reconciler, events } = setUp(policyGrant('g', {}, { namespace: 'unbound' }));
    await reconciler.reconcile('unbound/g', signal);
    expect(events).toEqual([
      expect.objectContaining({ type: 'Warning', reason: 'NotAuthorized', action: 'Withdraw' }),
    ]);
  });
});
