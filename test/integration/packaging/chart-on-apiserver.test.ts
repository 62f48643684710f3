import { beforeAll, describe, expect, it } from 'vitest';
import { installCrds } from '../../../dev/localplane/crds.js';
import { controlPlane, testKubeConfig } from '../support/cluster.js';
import {
  applyDryRun,
  CHART_DIR,
  createDryRun,
  createRestrictedNamespace,
  EVERY_FEATURE_VALUES,
  EXTERNAL_SPICEDB_VALUES,
  FIXTURES_DIR,
  OPERATIONS_VALUES,
  PRODUCTION_VALUES,
  isCrd,
  kubectl,
  packagingTools,
  podsOfWorkloads,
  renderChart,
  REQUIRED_VALUES,
  runCommand,
  toYamlStream,
  type KubeObject,
  type PodTemplate,
  withValuesFile,
  WORKLOAD_KINDS,
} from './packaging-support.js';

// The chart as the real kube-apiserver (v1.35) admits it: every rendered object passes server-side dry-run in a
// namespace that enforces Pod Security "restricted", CRDs first.

const RENDERINGS: [string, object][] = [
  ['the required settings only', REQUIRED_VALUES],
  ['every optional feature on', EVERY_FEATURE_VALUES],
  ['external SpiceDB with TLS, JWKS and credentials from Secrets', EXTERNAL_SPICEDB_VALUES],
  [
    'alerts, dashboard, Prometheus behind the NetworkPolicy, priority class and controller settings',
    OPERATIONS_VALUES,
  ],
  ['the documented production values, the read-only SpiceDB on TLS', PRODUCTION_VALUES],
];

// The shared control plane has the CRDs already (not Helm's: an install refuses to take them over, see
// docs/upgrade.md): installs against it leave them out.
const CRDS_INSTALLED = { crds: { enabled: false } };

let namespace: string;

/** A Secret of the audit trail (its contents are never used: nothing runs). */
function auditDatabaseSecret(name: string, data: Record<string, string>) {
  const encoded = Object.fromEntries(
    Object.entries(data).map(([key, value]) => [key, Buffer.from(value).toString('base64')]),
  );
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace }, data: encoded };
}

beforeAll(async () => {
  namespace = await createRestrictedNamespace('packaging-chart');
  const secret = auditDatabaseSecret('pgo-policy-grant-operator-audit-database', {
    url: 'postgres://acl_api:unused@postgres.invalid:5432/audit',
    migrationUrl: 'postgres://audit_owner:unused@postgres.invalid:5432/audit',
  });
  const chainKey = auditDatabaseSecret('pgo-policy-grant-operator-audit-chain-key', { key: 'k'.repeat(48) });
  expect((await kubectl(['create', '-f', '-'], toYamlStream([secret, chainKey]))).code).toBe(0);
  // The Gateway API's HTTPRoute and the Prometheus Operator's ServiceMonitor and PrometheusRule (validated subsets,
  // see fixtures/).
  await installCrds(testKubeConfig(), FIXTURES_DIR);
});

/** `helm install --dry-run=server`: lookup reads the real API server. */
async function installDryRun(values: object) {
  const { helm } = await packagingTools();
  const install = ['install', 'pgo', CHART_DIR, '--dry-run=server', '--namespace', namespace];
  return withValuesFile({ ...values, ...CRDS_INSTALLED }, (file) =>
    runCommand(helm, ['--kubeconfig', controlPlane().kubeconfigPath, ...install, '-f', file]),
  );
}

describe('helm lint --strict', () => {
  it.each(RENDERINGS)('passes with %s', async (_name, values) => {
    const { helm } = await packagingTools();
    const result = await withValuesFile(values, (file) =>
      runCommand(helm, ['lint', '--strict', CHART_DIR, '-f', file]),
    );
    expect(result.stderr + result.stdout).toContain('0 chart(s) failed');
    expect(result.code).toBe(0);
  });
});

describe('helm template, applied with server-side dry-run', () => {
  it.each(RENDERINGS)('%s: the API server accepts every object, CRDs first', async (_name, values) => {
    const objects = await renderChart(namespace, values);
    const crds = await applyDryRun(objects.filter(isCrd));
    expect(crds.stderr).toBe('');
    expect(crds.code).toBe(0);
    const rest = objects.filter((object) => !isCrd(object));
    const applied = await applyDryRun(rest);
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(0);
    expect(applied.stdout.trim().split('\n')).toHaveLength(rest.length);
  });

  it.each(RENDERINGS)('%s: no Pod Security warning about any workload template', async (_name, values) => {
    const workloads = (await renderChart(namespace, values)).filter((object) =>
      WORKLOAD_KINDS.includes(object.kind),
    );
    const applied = await applyDryRun(workloads);
    expect(applied.stderr).not.toMatch(/PodSecurity|Warning/);
    expect(applied.code).toBe(0);
  });

  it.each(RENDERINGS)(
    '%s: a Pod of every Deployment and of the migrations Job is admitted under "restricted" enforcement',
    async (_n, values) => {
      const pods = podsOfWorkloads(await renderChart(namespace, values));
      expect(pods.length).toBeGreaterThanOrEqual(4);
      const created = await createDryRun(pods);
      expect(created.stderr).toBe('');
      expect(created.code).toBe(0);
      expect(created.stdout.trim().split('\n')).toHaveLength(pods.length);
    },
  );

  it('the namespace really enforces "restricted": without the security contexts, a warning and a rejected Pod', async () => {
    const [deployment] = (await renderChart(namespace)).filter((object) => object.kind === 'Deployment');
    const template = (deployment?.spec as { template: PodTemplate }).template;
    delete template.spec.securityContext;
    for (const container of template.spec.containers as Record<string, unknown>[])
      delete container.securityContext;
    const warned = await applyDryRun([deployment as KubeObject]);
    expect(warned.stderr).toContain('would violate PodSecurity "restricted:latest"');
    const rejected = await createDryRun(podsOfWorkloads([deployment as KubeObject]));
    expect(rejected.code).not.toBe(0);
    expect(rejected.stderr).toContain('violates PodSecurity "restricted:latest"');
  });

  it('the HTTPRoute fixture enforces the Gateway API rules the route relies on (a broken rewrite is rejected)', async () => {
    const [route] = (await renderChart(namespace, EVERY_FEATURE_VALUES)).filter(
      (o) => o.kind === 'HTTPRoute',
    );
    const rules = (route?.spec as { rules: { matches: { path: { type: string } }[] }[] }).rules;
    (rules[0] as (typeof rules)[number]).matches[0] = { path: { type: 'Exact' } };
    const rejected = await applyDryRun([route as KubeObject]);
    expect(rejected.code).not.toBe(0);
    expect(rejected.stderr).toContain('exactly one PathPrefix match must be specified');
  });
});

describe('one controller per cluster', () => {
  const otherRelease = `other-${process.pid}`;
  const otherControllerRole = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: {
      name: `${otherRelease}-policy-grant-operator-controller`,
      labels: {
        'app.kubernetes.io/name': 'policy-grant-operator',
        'app.kubernetes.io/instance': otherRelease,
        'app.kubernetes.io/component': 'controller',
      },
      annotations: {
        'meta.helm.sh/release-name': otherRelease,
        'meta.helm.sh/release-namespace': 'elsewhere',
      },
    },
    rules: [],
  };

  it('an install is refused while another release’s controller exists, unless it watches a label selector', async () => {
    expect((await kubectl(['create', '-f', '-'], toYamlStream([otherControllerRole]))).code).toBe(0);
    try {
      const refused = await installDryRun(EXTERNAL_SPICEDB_VALUES);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain(
        `another policy-grant-operator controller is installed (ClusterRole ${otherControllerRole.metadata.name}, release ${otherRelease} in namespace elsewhere)`,
      );
      const shard = await installDryRun({
        ...EXTERNAL_SPICEDB_VALUES,
        controller: { labelSelector: 'shard=b' },
      });
      expect(shard.stderr).toBe('');
      expect(shard.code).toBe(0);
    } finally {
      await kubectl(['delete', 'clusterrole', otherControllerRole.metadata.name]);
    }
  });
});

describe('NOTES.txt', () => {
  /** `helm install --dry-run` renders NOTES.txt (helm template does not); it still asks the API server its version. */
  async function notes(values: object): Promise<string> {
    const { helm } = await packagingTools();
    const install = ['install', 'pgo', CHART_DIR, '--dry-run=client', '--namespace', namespace];
    const result = await withValuesFile({ ...values, ...CRDS_INSTALLED }, (file) =>
      runCommand(helm, ['--kubeconfig', controlPlane().kubeconfigPath, ...install, '-f', file]),
    );
    expect(result.stderr).toBe('');
    return result.stdout.slice(result.stdout.indexOf('NOTES:'));
  }

  it('warns loudly that the bundled SpiceDB is for development only', async () => {
    const text = await notes({
      auth: REQUIRED_VALUES.auth,
      spicedb: { bundled: { enabled: true }, presharedKey: 'bundled-dev-key' },
    });
    expect(text).toContain('WARNING: BUNDLED SPICEDB - DEVELOPMENT ONLY');
    expect(text).toContain('MEMORY datastore');
    // Memory cannot be shared with a read-only SpiceDB: the decision service holds the writing key, and is told so.
    expect(text).toContain("holds the bundled SpiceDB's WRITING key");
  });

  it('says where the CRDs come from, and nothing alarming for a configured install', async () => {
    const configured = await notes(EXTERNAL_SPICEDB_VALUES);
    expect(configured).toContain('CRDs (crds.enabled=false) are yours');
    expect(configured).not.toContain('WARNING');
  });
});

describe('the audit database Secret, checked when Helm sees the cluster', () => {
  // A shard: other test files install controller ClusterRoles of their own releases into the shared API
  // server, which the one-controller-per-cluster check would refuse first.
  const SHARD = { ...REQUIRED_VALUES, controller: { labelSelector: 'pgo-test=audit-secret' } };

  it.each([
    [
      'the database Secret',
      { database: { existingSecret: 'absent' } },
      'the audit database Secret absent does not',
    ],
    [
      'the chain key Secret',
      { chainKey: { existingSecret: 'no-chain-key' } },
      'the audit chain key Secret no-chain-key with the key key does not',
    ],
  ])(
    'an install is refused while %s is missing, naming it and the namespace',
    async (_name, audit, message) => {
      const refused = await installDryRun({ ...SHARD, audit });
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain(`${message} exist in namespace ${namespace}`);
    },
  );

  it('an install is refused when the Secret lacks the url key', async () => {
    const secret = auditDatabaseSecret('audit-without-url', { migrationUrl: 'postgres://owner@db/audit' });
    expect((await kubectl(['create', '-f', '-'], toYamlStream([secret]))).code).toBe(0);
    const refused = await installDryRun({
      ...SHARD,
      audit: { database: { existingSecret: 'audit-without-url' } },
    });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('the audit database Secret audit-without-url has no key url');
  });

  it("an install is refused when the Secret lacks the owner's migrationUrl the migrations Job needs, unless it does not run", async () => {
    const secret = auditDatabaseSecret('audit-without-migration-url', { url: 'postgres://acl_api@db/audit' });
    expect((await kubectl(['create', '-f', '-'], toYamlStream([secret]))).code).toBe(0);
    const database = { existingSecret: 'audit-without-migration-url' };
    const refused = await installDryRun({ ...SHARD, audit: { database } });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      'the audit database Secret audit-without-migration-url has no key migrationUrl',
    );
    for (const migrations of ['startup', 'skip']) {
      const installed = await installDryRun({ ...SHARD, audit: { database, migrations } });
      expect(installed.stderr).toBe('');
      expect(installed.code).toBe(0);
    }
  });

  it('an install with the Secret in place passes; helm template, blind to the cluster, does not check', async () => {
    const installed = await installDryRun(SHARD);
    expect(installed.stderr).toBe('');
    expect(installed.code).toBe(0);
    const rendered = await renderChart(namespace, {
      ...REQUIRED_VALUES,
      audit: { database: { existingSecret: 'absent' } },
    });
    expect(rendered.length).toBeGreaterThan(10);
  });
});
