import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  acl,
  eventually,
  kubectl,
  kubectlJson,
  sampleItemPartiesForFile,
  userAllowed,
  userCheckRequest,
} from '../e2e/support/stack-client.js';
import { CheckLoopPod } from './support/check-loop-pod.js';
import { release, upgradeRelease } from './support/release.js';

interface Lease {
  spec: { holderIdentity?: string; leaseDurationSeconds?: number };
}

interface Pod {
  metadata: { name: string; deletionTimestamp?: string };
  status?: { phase?: string };
}

/**
 * Beyond what the lease allows, a revocation may take one retry period of the standby (2 s by the chart) and the
 * new leader's first reconcile of the grant; both are seconds on a loaded node.
 */
const FAILOVER_SLACK_MS = 10_000;

const parties = sampleItemPartiesForFile();

const component = (name: string) => `${release().name}-${name}`;

async function grantTo(consumer: string): Promise<string> {
  const reply = await acl<{ results: { policyId: string }[] }>('/policy', {
    method: 'POST',
    token: parties.owner,
    body: {
      request: [
        {
          policyType: 'INDIVIDUAL',
          itemId: parties.item.itemId,
          itemType: parties.item.itemType,
          userId: consumer,
          expiryTime: new Date(Date.now() + 86_400_000).toISOString(),
          constraints: { access: [{ accessType: 'api' }] },
        },
      ],
    },
  });
  expect(reply.status).toBe(201);
  return (reply.body.results[0] as { policyId: string }).policyId;
}

const becomes = (consumer: string, allowed: boolean) =>
  eventually(`check for ${consumer} to be ${allowed}`, async () =>
    (await userAllowed(parties.checker, consumer, parties.item.itemId)) === allowed ? true : undefined,
  );

async function leaderPod(): Promise<{ pod: string; leaseMs: number }> {
  const lease = await kubectlJson<Lease>('get', 'lease', component('controller'), '-n', release().namespace);
  const holder = lease.spec.holderIdentity ?? '';
  // The identity is `<hostname>_<uuid>`, and a pod's hostname is its name.
  return { pod: holder.split('_')[0] as string, leaseMs: (lease.spec.leaseDurationSeconds ?? 0) * 1000 };
}

/** The decision service's pods that are not being deleted. */
async function decisionPods(): Promise<string[]> {
  const pods = await kubectlJson<{ items: Pod[] }>(
    'get',
    'pods',
    '-n',
    release().namespace,
    '-l',
    'app.kubernetes.io/component=decision-service',
  );
  // A replaced pod may still be draining after the rollout: it serves no new connection.
  return pods.items
    .filter((pod) => pod.metadata.deletionTimestamp === undefined)
    .map((pod) => pod.metadata.name)
    .sort();
}

describe('the release on a cluster', () => {
  it('fails over when the leader pod is deleted: a grant revoked meanwhile is denied within the lease', async () => {
    const consumer = randomUUID();
    const policyId = await grantTo(consumer);
    await becomes(consumer, true);
    const { pod, leaseMs } = await leaderPod();
    expect(pod, 'the controller holds its Lease').not.toBe('');

    await kubectl('delete', 'pod', pod, '-n', release().namespace, '--wait=false');
    const revokedAt = Date.now();
    const revoked = await acl(`/policy?id=${policyId}`, { method: 'DELETE', token: parties.owner });
    expect(revoked.status).toBe(200);
    await becomes(consumer, false);
    const deniedAfterMs = Date.now() - revokedAt;

    const next = await eventually('another replica to lead', async () => {
      const leader = (await leaderPod()).pod;
      return leader !== '' && leader !== pod ? leader : undefined;
    });
    console.log(
      `[install] leader ${pod} deleted; ${next} leads; the revoked grant was denied after ${deniedAfterMs} ms (lease ${leaseMs} ms)`,
    );
    expect(deniedAfterMs).toBeLessThan(leaseMs + FAILOVER_SLACK_MS);
  });

  it('rolls the decision service on helm upgrade with no failed check', async () => {
    const before = await decisionPods();
    const loop = await CheckLoopPod.start([{ body: userCheckRequest(randomUUID(), parties.item.itemId) }]);
    try {
      await upgradeRelease(
        ['--reuse-values', '--set', `decisionService.podAnnotations.rollout=${randomUUID()}`],
        '5m',
      );
      const { phase, summary } = await loop.stop();
      console.log(`[install] checks during the rollout: ${JSON.stringify(summary)}`);
      expect(phase).toBe('Succeeded');
      expect(summary).toMatchObject({ failed: 0, stopped: true });
      expect(summary.answered).toBeGreaterThan(0);
      const after = await decisionPods();
      expect(
        after.filter((pod) => before.includes(pod)),
        'every decision pod was replaced',
      ).toEqual([]);
    } finally {
      await loop.remove();
    }
  });
});
