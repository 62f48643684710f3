import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CatalogItem } from '../../src/api/v1alpha1/index.js';
import { DECISION_CLIENT_ROLE } from '../../src/config/decision-clients.js';
import {
  acl,
  eventually,
  kubectl,
  kubectlJson,
  sampleItemParties,
  token,
  userAllowed,
  userCheckRequest,
} from '../e2e/support/stack-client.js';
import { release } from './support/release.js';

const run = promisify(execFile);

interface Lease {
  spec: { holderIdentity?: string; leaseDurationSeconds?: number };
}

interface PodTemplate {
  spec: {
    securityContext?: unknown;
    containers: { name: string; image: string; securityContext?: unknown }[];
  };
}

interface Deployment {
  spec: { template: PodTemplate };
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

let item: CatalogItem['spec'];
let owner: string;
let checker: string;

beforeAll(async () => {
  ({ item, owner, checker } = await sampleItemParties());
});

const component = (name: string) => `${release().name}-${name}`;

async function grantTo(consumer: string): Promise<string> {
  const reply = await acl<{ results: { policyId: string }[] }>('/policy', {
    method: 'POST',
    token: owner,
    body: {
      request: [
        {
          policyType: 'INDIVIDUAL',
          itemId: item.itemId,
          itemType: item.itemType,
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
    (await userAllowed(checker, consumer, item.itemId)) === allowed ? true : undefined,
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
    const revoked = await acl(`/policy?id=${policyId}`, { method: 'DELETE', token: owner });
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
    const { name, namespace, chart, helm, kubeconfig } = release();
    const before = await decisionPods();
    const checkerPod = `check-loop-${randomUUID().slice(0, 8)}`;
    await kubectl('apply', '-f', await checkLoopManifest(checkerPod));
    try {
      await eventually('the check loop to get its first answer', async () =>
        // No logs while the container is being created: not yet.
        (await podLogs(checkerPod).catch(() => '')).includes('first answer') ? true : undefined,
      );
      await run(helm, [
        'upgrade',
        name,
        chart,
        '--kubeconfig',
        kubeconfig,
        '--namespace',
        namespace,
        '--reuse-values',
        '--set',
        `decisionService.podAnnotations.rollout=${randomUUID()}`,
        '--wait',
        '--timeout',
        '5m',
      ]);
      await kubectl(
        'exec',
        checkerPod,
        '-n',
        namespace,
        '--',
        'node',
        '-e',
        "require('fs').writeFileSync('/work/stop', '')",
      );
      const phase = await eventually('the check loop to finish', async () => {
        const pod = await kubectlJson<Pod>('get', 'pod', checkerPod, '-n', namespace);
        return ['Succeeded', 'Failed'].includes(pod.status?.phase ?? '') ? pod.status?.phase : undefined;
      });
      const summary = JSON.parse((await podLogs(checkerPod)).trim().split('\n').at(-1) as string);
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
      await kubectl('delete', 'pod', checkerPod, '-n', namespace, '--wait=false', '--ignore-not-found');
    }
  });
});

const podLogs = (pod: string) => kubectl('logs', pod, '-n', release().namespace);

/**
 * A pod that runs the check loop (support/check-loop.mjs) on the release's own image, with the decision
 * service's security contexts, so that it runs in a namespace that enforces Pod Security `restricted`.
 */
async function checkLoopManifest(pod: string): Promise<string> {
  const { namespace } = release();
  const deployment = await kubectlJson<Deployment>(
    'get',
    'deployment',
    component('decision-service'),
    '-n',
    namespace,
  );
  const template = deployment.spec.template.spec;
  const container = template.containers[0] as PodTemplate['spec']['containers'][number];
  const script = await readFile(new URL('./support/check-loop.mjs', import.meta.url), 'utf8');
  const manifest = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: pod, namespace },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      securityContext: template.securityContext,
      containers: [
        {
          name: 'check-loop',
          image: container.image,
          imagePullPolicy: 'Never',
          securityContext: container.securityContext,
          command: ['node', '--input-type=module', '-e', script],
          env: Object.entries({
            CHECK_URL: `http://${component('decision-service')}.${namespace}.svc:8081/v1/check`,
            CHECK_BODY: JSON.stringify(userCheckRequest(randomUUID(), item.itemId)),
            CHECK_TOKEN: await token(randomUUID(), { roles: [DECISION_CLIENT_ROLE] }),
            STOP_FILE: '/work/stop',
          }).map(([name, value]) => ({ name, value })),
          volumeMounts: [{ name: 'work', mountPath: '/work' }],
          resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '128Mi' } },
        },
      ],
      volumes: [{ name: 'work', emptyDir: {} }],
    },
  };
  const file = join(await mkdtemp(join(tmpdir(), 'policy-grant-install-')), `${pod}.json`);
  await writeFile(file, JSON.stringify(manifest));
  return file;
}
