import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DECISION_CLIENT_ROLE } from '../../../src/config/decision-clients.js';
import { eventually, kubectl, kubectlJson, token } from '../../e2e/support/stack-client.js';
import { release } from './release.js';

interface PodTemplate {
  spec: {
    securityContext?: unknown;
    containers: { name: string; image: string; securityContext?: unknown }[];
  };
}

interface Pod {
  status?: { phase?: string };
}

/** One check the loop asks each round: its /v1/check body and, when one is due, the decision. */
export interface LoopCheck {
  body: Record<string, string>;
  allowed?: boolean;
}

/** A span of consecutive failed rounds (epoch ms), with the checks that failed in it. */
export interface Outage {
  from: number;
  to: number;
  failed: number;
}

export interface CheckLoopSummary {
  answered: number;
  failed: number;
  violations: number;
  failures: string[];
  outages: Outage[];
  stopped: boolean;
}

/** The loop's once-a-second line. */
interface Progress {
  at: number;
  failing: boolean;
}

const component = (name: string) => `${release().name}-${name}`;

/**
 * The check loop (check-loop.mjs) in a pod of the release's namespace, asking the decision service's Service as
 * a gateway would. `start` returns once it got its first answer.
 */
export class CheckLoopPod {
  private constructor(readonly name: string) {}

  static async start(checks: LoopCheck[]): Promise<CheckLoopPod> {
    const loop = new CheckLoopPod(`check-loop-${randomUUID().slice(0, 8)}`);
    await kubectl('apply', '-f', await checkLoopManifest(loop.name, checks));
    await eventually('the check loop to get its first answer', async () =>
      // No logs while the container is being created: not yet.
      (await loop.logs().catch(() => '')).includes('first answer') ? true : undefined,
    );
    return loop;
  }

  logs(): Promise<string> {
    return kubectl('logs', this.name, '-n', release().namespace);
  }

  /** Waits until a progress line later than `after` (epoch ms) reports a round that did not fail. */
  async answeringRightSince(after: number): Promise<void> {
    await eventually(`the check loop to answer right after ${new Date(after).toISOString()}`, async () => {
      const lines = (await this.logs()).split('\n').filter((line) => line.startsWith('{"at"'));
      const progress = lines.map((line) => JSON.parse(line) as Progress);
      return progress.some((line) => line.at > after && !line.failing) ? true : undefined;
    });
  }

  /** Stops the loop and returns its summary; expects it to have ended on its own (Succeeded). */
  async stop(): Promise<{ phase: string; summary: CheckLoopSummary }> {
    const { namespace } = release();
    await kubectl(
      'exec',
      this.name,
      '-n',
      namespace,
      '--',
      'node',
      '-e',
      "require('fs').writeFileSync('/work/stop', '')",
    );
    const phase = await eventually('the check loop to finish', async () => {
      const pod = await kubectlJson<Pod>('get', 'pod', this.name, '-n', namespace);
      return ['Succeeded', 'Failed'].includes(pod.status?.phase ?? '') ? pod.status?.phase : undefined;
    });
    const summary = JSON.parse((await this.logs()).trim().split('\n').at(-1) as string) as CheckLoopSummary;
    return { phase, summary };
  }

  async remove(): Promise<void> {
    await kubectl(
      'delete',
      'pod',
      this.name,
      '-n',
      release().namespace,
      '--wait=false',
      '--ignore-not-found',
    );
  }
}

/**
 * A pod that runs the check loop on the release's own image, with the decision service's security contexts, so
 * that it runs in a namespace that enforces Pod Security `restricted`.
 */
async function checkLoopManifest(pod: string, checks: LoopCheck[]): Promise<string> {
  const { namespace } = release();
  const deployment = await kubectlJson<{ spec: { template: PodTemplate } }>(
    'get',
    'deployment',
    component('decision-service'),
    '-n',
    namespace,
  );
  const template = deployment.spec.template.spec;
  const container = template.containers[0] as PodTemplate['spec']['containers'][number];
  const script = await readFile(new URL('./check-loop.mjs', import.meta.url), 'utf8');
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
            CHECKS: JSON.stringify(checks),
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
