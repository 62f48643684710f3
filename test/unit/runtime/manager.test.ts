import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { KubeClient } from '../../../src/kube/kube-client.js';
import { Registry as MetricsRegistry } from 'prom-client';
import type { Lease } from '../../../src/kube/lease-client.js';
import { Manager } from '../../../src/runtime/manager.js';
import type { ManagerOptions } from '../../../src/runtime/manager.js';
import { FakeHttpApi, sendJson, startStream } from './support/fake-http-api.js';
import { until } from '../../../dev/wait/until.js';

// Managers against a fake API server over HTTP: ConfigMaps to reconcile, one Lease to elect on.

const PATH = '/api/v1/namespaces/ns/configmaps';
const ELECTION = {
  namespace: 'ns',
  name: 'lease',
  leaseDurationMs: 2000,
  renewDeadlineMs: 1500,
  retryPeriodMs: 300,
};

describe('Manager', () => {
  let api: FakeHttpApi;
  let kube: KubeClient;
  let lease: Lease | undefined;
  let revision: number;
  /** Identities whose lease writes the server refuses (a leader cut off from the API server). */
  let refused: Set<string>;
  let managers: Manager[];

  beforeEach(async () => {
    api = new FakeHttpApi();
    kube = new KubeClient(await api.listen());
    lease = undefined;
    revision = 0;
    refused = new Set();
    managers = [];
    api.route = (req, url, res) => {
      if (url.pathname === PATH) {
        if (url.searchParams.get('watch') === 'true') {
          startStream(res);
        } else {
          sendJson(res, 200, {
            metadata: { resourceVersion: '9' },
            items: ['a', 'b'].map((name) => ({ metadata: { name, namespace: 'ns', resourceVersion: '3' } })),
          });
        }
        return;
      }
      const body = api.requests.at(-1)?.body;
      if (req.method === 'GET') {
        return lease ? sendJson(res, 200, lease) : sendJson(res, 404, { code: 404, reason: 'NotFound' });
      }
      const written = JSON.parse(body ?? '{}') as Lease;
      if (refused.has(written.spec?.holderIdentity ?? '')) {
        return sendJson(res, 503, { code: 503, reason: 'ServiceUnavailable' });
      }
      const current = req.method === 'POST' ? undefined : lease?.metadata.resourceVersion;
      if ((req.method === 'POST' && lease) || written.metadata.resourceVersion !== current) {
        return sendJson(res, 409, { code: 409, reason: 'Conflict' });
      }
      revision += 1;
      lease = { ...written, metadata: { ...written.metadata, resourceVersion: String(revision) } };
      sendJson(res, 200, lease);
    };
  });

  afterEach(async () => {
    await Promise.all(managers.map((manager) => manager.stop()));
    await api.close();
  });

  function manager(reconciled: string[], options: Partial<ManagerOptions> = {}): Manager {
    const made = new Manager({
      kube,
      registry: new MetricsRegistry(),
      gracefulShutdownTimeoutMs: 1000,
      ...options,
    });
    managers.push(made);
    const informer = made.informer<V1ConfigMap>({ path: PATH });
    made.addController({ name: 'cm', for: informer, reconcile: (key) => void reconciled.push(key) });
    return made;
  }

  it('without election runs its controllers at once and reports synced and leading', async () => {
    const reconciled: string[] = [];
    const single = manager(reconciled);
    expect(single.isLeader()).toBe(false);
    single.start();
    await single.waitForSync();
    expect(single.hasSynced()).toBe(true);
    expect(single.isLeader()).toBe(true);
    await until(() => reconciled.length === 2);
    expect(reconciled.sort()).toEqual(['ns/a', 'ns/b']);
    await single.stop();
    expect(single.isLeader()).toBe(false);
    await until(() => api.openResponses().length === 0);
  });

  it('shares one informer per path and selectors', () => {
    const shared = manager([]);
    expect(shared.informer({ path: PATH })).toBe(shared.informer({ path: PATH }));
    expect(shared.informer({ path: PATH, labelSelector: 'a=b' })).not.toBe(shared.informer({ path: PATH }));
  });

  it("caches with an informer's own transform, else the manager's default", async () => {
    const made = manager([], {
      defaultTransform: (obj) => ({ ...obj, metadata: { ...obj.metadata, labels: { by: 'default' } } }),
    });
    const own = made.informer<V1ConfigMap>({
      path: PATH,
      labelSelector: 'own',
      transform: (obj) => ({ ...obj, data: { by: 'own' } }),
    });
    made.start();
    await made.waitForSync();
    expect(made.informer<V1ConfigMap>({ path: PATH }).get('ns/a')?.metadata?.labels).toEqual({
      by: 'default',
    });
    expect(own.get('ns/a')).toMatchObject({ data: { by: 'own' } });
    expect(own.get('ns/a')?.metadata?.labels).toBeUndefined();
  });

  it('with two managers on one Lease, only the leader reconciles; a graceful stop hands over at once', async () => {
    // A lease far longer than the test may wait: b can only lead if a's release hands the lease over. And a
    // renewal deadline no loaded machine misses: a must not lose its lease to a slow renewal meanwhile.
    const election = { ...ELECTION, leaseDurationMs: 600_000, renewDeadlineMs: 300_000 };
    const first: string[] = [];
    const second: string[] = [];
    const a = manager(first, { leaderElection: election });
    a.start();
    await until(() => a.isLeader());
    const b = manager(second, { leaderElection: election });
    b.start();
    await b.waitForSync();
    await until(() => first.length === 2);
    const renewedBefore = revision;
    await until(() => revision >= renewedBefore + 3, 'a to renew its lease three times', 30_000);
    expect([a.isLeader(), b.isLeader()]).toEqual([true, false]);
    expect(second).toEqual([]);

    await a.stop();
    expect(lease?.spec).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1 });
    await until(() => b.isLeader(), 'b to lead', 30_000);
    await until(() => second.length === 2);
    expect(lease?.spec?.holderIdentity).toBe(b.identity);
  });

  it('steps down when asked: controllers stop, the caller is told, and a new term begins later', async () => {
    let lost = 0;
    const a = manager([], { leaderElection: ELECTION, onLeadershipLost: () => (lost += 1) });
    a.start();
    await until(() => a.isLeader());
    const firstTerm = a.leadershipTerm();
    a.stepDown();
    expect(a.isLeader()).toBe(false);
    expect(a.leadershipTerm()).toBeUndefined();
    await until(() => lost === 1);
    await until(() => a.isLeader(), 'a to lead again', 30_000);
    expect(a.leadershipTerm()).not.toBe(firstTerm);
  });

  it('stops its controllers when leadership is lost, tells the caller, and campaigns again', async () => {
    const first: string[] = [];
    let lost = 0;
    const a = manager(first, { leaderElection: ELECTION, onLeadershipLost: () => (lost += 1) });
    a.start();
    await until(() => first.length === 2);
    const b = manager([], { leaderElection: ELECTION });
    b.start();
    refused.add(a.identity ?? '');
    await until(() => lost === 1);
    expect(a.isLeader()).toBe(false);
    await until(() => b.isLeader());
    refused.clear();
    await b.stop();
    await until(() => a.isLeader());
    await until(() => first.length === 4);
  });

  it('begins each term with its hooks, then lists every informer again, and only then runs the controllers', async () => {
    const reconciled: string[] = [];
    const lists = () =>
      api.requests.filter(({ url }) => url.pathname === PATH && url.searchParams.get('watch') !== 'true')
        .length;
    const a = manager(reconciled, { leaderElection: ELECTION });
    let releaseHook: () => void = () => undefined;
    const hookCalls: number[] = [];
    a.beforeEachTerm(async () => {
      hookCalls.push(lists());
      await new Promise<void>((resolve) => (releaseHook = resolve));
    });
    a.start();
    await a.waitForSync();
    await until(() => hookCalls.length === 1, 'the term to run its hook');
    expect(a.isLeader()).toBe(true);
    expect(a.leadsWithFreshCaches()).toBe(false);
    const listsBeforeHookEnded = lists();
    expect(listsBeforeHookEnded).toBe(hookCalls[0]);
    expect(reconciled).toEqual([]);

    releaseHook();
    await until(() => a.leadsWithFreshCaches(), 'the caches to be listed again');
    expect(lists()).toBe(listsBeforeHookEnded + 1);
    await until(() => reconciled.length === 2);
  });

  it('gives up leadership when a term cannot start', async () => {
    let lost = 0;
    const a = manager([], { leaderElection: ELECTION, onLeadershipLost: () => (lost += 1) });
    let failures = 0;
    a.beforeEachTerm(() =>
      (failures += 1) === 1 ? Promise.reject(new Error('fenced off')) : Promise.resolve(),
    );
    a.start();
    await until(() => lost === 1, 'the failed term to step down');
    await until(() => a.leadsWithFreshCaches(), 'the next term to start', 30_000);
    expect(failures).toBe(2);
  });
});
