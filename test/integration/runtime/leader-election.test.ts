import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { KubeConfig, V1ConfigMap, V1Lease } from '@kubernetes/client-node';
import { Registry as MetricsRegistry } from 'prom-client';
import { KubeClient } from '../../../src/kube/kube-client.js';
import { LEASE_RESOURCE } from '../../../src/kube/index.js';
import { Manager } from '../../../src/runtime/manager.js';
import type { ManagerLeaderElection } from '../../../src/runtime/manager.js';
import { createTestNamespace, testKubeConfig } from '../support/cluster.js';
import { CONFIG_MAP_RESOURCE, TestObjects } from '../support/objects.js';
import { until } from '../../../dev/wait/until.js';

const TIMINGS = { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 500 };
/**
 * A leader that keeps its lease however loaded the machine: a lease far longer than a test waits, and a renewal
 * deadline no slow renewal misses. Only a release (or a takeover test's crash) moves such a lease.
 */
const STEADY = { leaseDurationMs: 600_000, renewDeadlineMs: 300_000 };

describe('Manager leader election against the real kube-apiserver', () => {
  let kubeConfig: KubeConfig;
  let namespace: string;
  let managers: Manager[];
  const reconciledBy = new Map<Manager, string[]>();

  function manager(election: Partial<ManagerLeaderElection> = {}): Manager {
    // A client of its own per manager: two replicas share no connection pool.
    const made = new Manager({
      kube: new KubeClient(kubeConfig),
      registry: new MetricsRegistry(),
      gracefulShutdownTimeoutMs: 2000,
      leaderElection: { namespace, name: 'runtime-test', ...TIMINGS, ...election },
    });
    const reconciled: string[] = [];
    reconciledBy.set(made, reconciled);
    const informer = made.informer<V1ConfigMap>({ path: `/api/v1/namespaces/${namespace}/configmaps` });
    made.addController({ name: 'configmaps', for: informer, reconcile: (key) => void reconciled.push(key) });
    managers.push(made);
    made.start();
    return made;
  }

  const leaders = (): Manager[] => managers.filter((m) => m.isLeader());
  const objects = new TestObjects();
  const readLease = async () => (await objects.get<V1Lease>(LEASE_RESOURCE, 'runtime-test', namespace)).spec;
  const leaseHolder = async (): Promise<string | undefined> => (await readLease())?.holderIdentity;

  beforeAll(() => {
    kubeConfig = testKubeConfig();
  });

  afterEach(async () => {
    await Promise.all(managers.map((m) => m.stop()));
  });

  async function twoManagersOneLeading(
    election: Partial<ManagerLeaderElection> = {},
  ): Promise<[Manager, Manager]> {
    namespace = await createTestNamespace('rt-election');
    managers = [];
    await objects.create(CONFIG_MAP_RESOURCE, { metadata: { name: 'work' }, data: {} }, namespace);
    const first = manager(election);
    await until(() => first.isLeader(), 'the first manager to lead');
    const second = manager();
    await second.waitForSync();
    return [first, second];
  }

  it('lets exactly one of two managers lead and reconcile', async () => {
    const [first, second] = await twoManagersOneLeading(STEADY);
    // Across several renewals seen in the Lease itself, the second manager never leads.
    const renewals = new Set<string>();
    await until(
      async () => {
        expect(leaders()).toEqual([first]);
        const spec = await readLease();
        expect(spec?.holderIdentity).toBe(first.identity);
        renewals.add(String(spec?.renewTime));
        return renewals.size >= 4;
      },
      'the leader to renew its lease three times',
      60_000,
    );
    expect(reconciledBy.get(first)).toContain(`${namespace}/work`);
    expect(reconciledBy.get(second)).toEqual([]);
  });

  it('hands over at once when the leader stops gracefully', async () => {
    // The second can only lead because the first released it.
    const [first, second] = await twoManagersOneLeading(STEADY);
    await first.stop();
    // Released: an empty holder with a 1 s duration, so the second need not wait for the lease to expire.
    expect(await readLease()).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1 });
    await until(() => second.isLeader(), 'the second manager to lead', 30_000);
    expect(await leaseHolder()).toBe(second.identity);
    await until(() => (reconciledBy.get(second) ?? []).length > 0, 'the new leader to reconcile');
  });

  it('takes over from a leader killed without releasing, once the lease expires', async () => {
    const [first, second] = await twoManagersOneLeading({ releaseOnCancel: false });
    const killedAt = Date.now();
    await first.stop(); // no release: to the Lease this is a crash
    expect(await leaseHolder()).toBe(first.identity);
    await until(() => second.isLeader(), 'the second manager to lead');
    // Never before the lease could have expired: expiry is judged from when the follower saw the last renewal,
    // which it polls every retryPeriod (jittered).
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(
      TIMINGS.leaseDurationMs - TIMINGS.retryPeriodMs * 2.2,
    );
    expect(await leaseHolder()).toBe(second.identity);
  });
});
