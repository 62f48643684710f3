import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_DIR } from '../../../hack/sync-packaging.js';
import {
  EVERY_FEATURE_VALUES,
  EXTERNAL_SPICEDB_VALUES,
  kubectl,
  parseManifests,
  renderChart,
  type KubeObject,
} from './packaging-support.js';

// Rollouts and restarts: the drain settings on every Deployment, and a new pod
// template (so a rollout) whenever a setting the services read only at start changes.

const NAMESPACE = 'policy-grant-system';

interface Container {
  env?: Array<{ name: string; value?: string }>;
  lifecycle?: unknown;
}

interface PodTemplate {
  metadata: { annotations: Record<string, string> };
  spec: { terminationGracePeriodSeconds: number; containers: Container[] };
}

const component = (object: KubeObject) => object.metadata.labels?.['app.kubernetes.io/component'];

function deploymentOf(
  objects: KubeObject[],
  name: string,
): { spec: Record<string, unknown>; template: PodTemplate } {
  const deployment = objects.find((object) => object.kind === 'Deployment' && component(object) === name);
  if (!deployment) throw new Error(`no Deployment of ${name}`);
  const spec = deployment.spec as Record<string, unknown> & { template: PodTemplate };
  return { spec, template: spec.template };
}

const envOf = (template: PodTemplate, name: string) =>
  template.spec.containers[0]?.env?.find((variable) => variable.name === name)?.value;

describe('rollouts', () => {
  it('surge before taking a pod away, drain 5 s, and leave the kubelet time for it, by default', async () => {
    const objects = await renderChart(NAMESPACE, EXTERNAL_SPICEDB_VALUES);
    for (const name of ['acl-api', 'controller', 'decision-service']) {
      const { spec, template } = deploymentOf(objects, name);
      expect(spec.strategy).toEqual({
        type: 'RollingUpdate',
        rollingUpdate: { maxUnavailable: 0, maxSurge: 1 },
      });
      expect(template.spec.terminationGracePeriodSeconds).toBe(30);
      expect(template.spec.containers[0]?.lifecycle).toBeUndefined();
    }
    expect(envOf(deploymentOf(objects, 'acl-api').template, 'SHUTDOWN_DRAIN_SECONDS')).toBe('5');
    expect(envOf(deploymentOf(objects, 'decision-service').template, 'SHUTDOWN_DRAIN_SECONDS')).toBe('5');
    expect(envOf(deploymentOf(objects, 'controller').template, 'SHUTDOWN_DRAIN_SECONDS')).toBeUndefined();
  });

  it('takes the drain, a preStop sleep, the grace period and the strategy from the values', async () => {
    const objects = await renderChart(NAMESPACE, {
      ...EXTERNAL_SPICEDB_VALUES,
      decisionService: {
        drainSeconds: 10,
        preStopSleepSeconds: 5,
        terminationGracePeriodSeconds: 60,
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '50%' } },
      },
    });
    const { spec, template } = deploymentOf(objects, 'decision-service');
    expect(spec.strategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxUnavailable: '25%', maxSurge: '50%' },
    });
    expect(template.spec.terminationGracePeriodSeconds).toBe(60);
    expect(template.spec.containers[0]?.lifecycle).toEqual({ preStop: { sleep: { seconds: 5 } } });
    expect(envOf(template, 'SHUTDOWN_DRAIN_SECONDS')).toBe('10');
  });

  it.each([
    [
      'a grace period the drain does not fit in',
      { drainSeconds: 15, terminationGracePeriodSeconds: 20 },
      'terminationGracePeriodSeconds of decision-service (20) must exceed',
    ],
    ['a negative drain', { drainSeconds: -1 }, 'drainSeconds'],
    ['an unknown strategy', { strategy: { type: 'BlueGreen' } }, 'strategy'],
    [
      'a surge over 100%',
      { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '150%' } } },
      'maxSurge',
    ],
  ])('refuses %s', async (_name, decisionService, message) => {
    await expect(renderChart(NAMESPACE, { ...EXTERNAL_SPICEDB_VALUES, decisionService })).rejects.toThrow(
      message,
    );
  });
});

describe('restarts where a setting is read only at start', () => {
  const checksums = async (presharedKey: string) => {
    const objects = await renderChart(NAMESPACE, {
      ...EVERY_FEATURE_VALUES,
      spicedb: { ...EVERY_FEATURE_VALUES.spicedb, presharedKey },
    });
    const annotations = (name: string) => deploymentOf(objects, name).template.metadata.annotations;
    return {
      controller: annotations('controller')['checksum/spicedb-secret'],
      decision: annotations('decision-service')['checksum/spicedb-secret'],
      acl: annotations('acl-api')['checksum/spicedb-secret'],
      settings: annotations('decision-service')['checksum/settings'],
    };
  };

  it('a new SpiceDB key (an environment variable) changes the pod templates of its clients', async () => {
    const [before, after] = await Promise.all([checksums('first-key'), checksums('rotated-key')]);
    expect(before.controller).toMatch(/^[0-9a-f]{64}$/);
    expect(after.controller).not.toBe(before.controller);
    expect(after.decision).not.toBe(before.decision);
    expect(after.settings).toBe(before.settings);
    // The ACL API does not talk to SpiceDB: a new key restarts nothing there.
    expect(before.acl).toBeUndefined();
  });

  it('the read-only SpiceDB rolls out on a new key, and its checksum is salted: no digest of the bare key', async () => {
    const readOnlyChecksum = async (presharedKey: string, release = 'pgo', namespace = NAMESPACE) => {
      const values = {
        ...EXTERNAL_SPICEDB_VALUES,
        spicedb: {
          ...EXTERNAL_SPICEDB_VALUES.spicedb,
          readOnly: { ...EXTERNAL_SPICEDB_VALUES.spicedb.readOnly, presharedKey },
        },
      };
      const objects = await renderChart(namespace, values, release);
      return deploymentOf(objects, 'spicedb-read-only').template.metadata.annotations[
        'checksum/preshared-key'
      ];
    };
    const [changeme, again, rotated, otherRelease, otherNamespace] = await Promise.all([
      readOnlyChecksum('changeme'),
      readOnlyChecksum('changeme'),
      readOnlyChecksum('rotated-key'),
      readOnlyChecksum('changeme', 'other'),
      readOnlyChecksum('changeme', 'pgo', 'other-namespace'),
    ]);
    expect(changeme).toMatch(/^[0-9a-f]{64}$/);
    expect(again).toBe(changeme);
    expect(rotated).not.toBe(changeme);
    const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
    expect(changeme).not.toBe(sha256('changeme'));
    expect(changeme).not.toBe(sha256(Buffer.from('changeme').toString('base64')));
    // The same key in another release or namespace gives another value: no table of digests recognises it.
    expect(new Set([changeme, otherRelease, otherNamespace]).size).toBe(3);
  });

  it('a SpiceDB Secret of the user has no checksum: it is theirs to roll out (docs/access-control.md)', async () => {
    const objects = await renderChart(NAMESPACE, EXTERNAL_SPICEDB_VALUES);
    const { template } = deploymentOf(objects, 'decision-service');
    expect(template.metadata.annotations).not.toHaveProperty('checksum/spicedb-secret');
    expect(template.metadata.annotations).toHaveProperty('checksum/settings');
  });
});

/** config/default with LOG_LEVEL set by an overlay's patch: the names of the settings each Deployment reads. */
async function settingsReadByDeployments(logLevel: string): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), 'pgo-settings-'));
  try {
    const patch = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'policy-grant-operator-settings', namespace: 'policy-grant-system' },
      data: { LOG_LEVEL: logLevel },
    };
    await writeFile(join(dir, 'settings.yaml'), JSON.stringify(patch));
    await writeFile(
      join(dir, 'kustomization.yaml'),
      JSON.stringify({
        resources: [relative(dir, join(CONFIG_DIR, 'default'))],
        patches: [{ path: 'settings.yaml' }],
      }),
    );
    const built = parseManifests((await kubectl(['kustomize', dir])).stdout);
    // The services' Deployments: the read-only SpiceDB reads no settings.
    return built
      .filter(
        (object) =>
          object.kind === 'Deployment' &&
          object.metadata.labels?.['app.kubernetes.io/component'] !== 'spicedb-read-only',
      )
      .map((deployment) => {
        const { template } = deployment.spec as {
          template: { spec: { containers: Array<{ envFrom: Array<{ configMapRef: { name: string } }> }> } };
        };
        return template.spec.containers[0]?.envFrom[0]?.configMapRef.name ?? '';
      });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('config/ (kustomize)', () => {
  it('names the settings ConfigMap by a hash of its content, so that a change rolls the Deployments out', async () => {
    const [info, debug] = await Promise.all([
      settingsReadByDeployments('info'),
      settingsReadByDeployments('debug'),
    ]);
    expect(info).toHaveLength(3);
    expect(new Set(info).size).toBe(1);
    expect(info[0]).toMatch(/^policy-grant-operator-settings-[a-z0-9]{10}$/);
    expect(new Set(debug).size).toBe(1);
    expect(debug[0]).not.toBe(info[0]);
  });
});
