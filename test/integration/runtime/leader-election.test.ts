import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CoreV1Api, CoordinationV1Api } from '@kubernetes/client-node';
import type { KubeConfig, V1ConfigMap } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { Manager } from '../../../src/runtime/manager.js';
import type { ManagerLeaderElection } from '../../../src/runtime/manager.js';
import { createTestNamespace, testKubeConfig } from '../support/cluster.js';
import { until } from '../../support/until.js';

const TIMINGS = { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 500 };

describe('Manager leader election against the real kube-apiserver', () => {
  let kubeConfig: KubeConfig;
  let namespace: string;
  let managers: Manager[];
  const reconciledBy = new Map<Manager, string[]>();

  function manager(election: Partial<ManagerLeaderElection> = {}): Manager {
    const made = new Manager({
      kubeConfig,
      registry: new Registry(),
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
  const leaseHolder = async (): Promise<string | undefined> =>
    (
      await kubeConfig
        .makeApiClient(CoordinationV1Api)
        .readNamespacedLease({ name: 'runtime-test', namespace })
    ).spec?.holderIdentity;

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
    await kubeConfig
      .makeApiClient(CoreV1Api)
      .createNamespacedConfigMap({ namespace, body: { metadata: { name: 'work' }, data: {} } });
    const first = manager(election);
    await until(() => first.isLeader(), 'the first manager to lead');
    const second = manager();
    await second.waitForSync();
    return [first, second];
  }

  it('lets exactly one of two managers lead and reconcile', async () => {
    const [first, second] = await twoManagersOneLeading();
    for (let i = 0; i < 20; i++) {
      expect(leaders()).toEqual([first]);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(await leaseHolder()).toBe(first.identity);
    expect(reconciledBy.get(first)).toContain(`${namespace}/work`);
    expect(reconciledBy.get(second)).toEqual([]);
  });

  it('hands over at once when the leader stops gracefully', async () => {
    const [first, second] = await twoManagersOneLeading();
    const stoppedAt = Date.now();
    await first.stop();
    await until(() => second.isLeader(), 'the second manager to lead');
    const handover = Date.now() - stoppedAt;
    expect(handover).toBeLessThan(TIMINGS.leaseDurationMs);
    expect(await leaseHolder()).toBe(second.identity);
    await until(() => (reconciledBy.get(second) ?? []).length > 0, 'the new leader to reconcile');
  });

  it('takes over from a leader killed without releasing, within the lease duration', async () => {
    const [first, second] = await twoManagersOneLeading({ releaseOnCancel: false });
    const killedAt = Date.now();
    await first.stop(); // no release: to the Lease this is a crash
    expect(await leaseHolder()).toBe(first.identity);
    await until(() => second.isLeader(), 'the second manager to lead');
    const takeover = Date.now() - killedAt;
    expect(takeover).toBeGreaterThanOrEqual(TIMINGS.leaseDurationMs - TIMINGS.retryPeriodMs * 2.2);
    // Expiry is judged from when the follower saw the last renewal, and the follower polls every retryPeriod (jittered).
    expect(takeover).toBeLessThanOrEqual(TIMINGS.leaseDurationMs + 2 * TIMINGS.retryPeriodMs * 2.2 + 300);
    expect(await leaseHolder()).toBe(second.identity);
  });
});
