import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONFIG_DIR,
  CONFIG_RELEASE,
  CONFIG_SPICEDB_SECRETS,
  CONFIG_VALUES,
  GENERATED_CONFIG_DIRS,
  helmTemplate,
  renderConfigFiles,
  REPO_ROOT,
  type GeneratedFile,
} from '../../../hack/sync-packaging.js';
import { startSpiceDB } from '../../../dev/localplane/spicedb-server.js';
import { makeStateDir, spicedbBinary } from '../controller/support/harness.js';
import { createTestNamespace } from '../support/cluster.js';
import { testDatabase } from '../support/database.js';
import { expectWritesRefused } from '../support/read-only-spicedb.js';
import {
  applyDryRun,
  createDryRun,
  createRestrictedNamespace,
  isCrd,
  kubectl,
  packagingTools,
  parseManifests,
  podsOfWorkloads,
  type KubeObject,
  type PodTemplate,
} from './packaging-support.js';

// config/ (kustomize, kubebuilder layout) is rendered from the chart, so the two cannot drift; and what the
// overlays build is admitted by the real kube-apiserver like the chart is.

const REGENERATE = 'config/ is out of date with the chart: run `npx tsx hack/sync-packaging.ts`';

let generated: GeneratedFile[];
let overlayDir: string;

beforeAll(async () => {
  generated = await renderConfigFiles((await packagingTools()).helm);
  overlayDir = await mkdtemp(join(tmpdir(), 'pgo-kustomize-'));
});

afterAll(async () => {
  await rm(overlayDir, { recursive: true, force: true });
});

/** `kubectl kustomize` of config/<overlay>, moved into `namespace` by an overlay on top of it. */
async function buildInto(overlay: string, namespace: string): Promise<KubeObject[]> {
  const dir = join(overlayDir, `${overlay}-${namespace}`);
  await mkdir(dir);
  const base = relative(dir, join(CONFIG_DIR, overlay));
  await writeFile(
    join(dir, 'kustomization.yaml'),
    `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: ${namespace}\nresources:\n  - ${base}\n`,
  );
  const built = await kubectl(['kustomize', dir]);
  expect(built.stderr).toBe('');
  return parseManifests(built.stdout);
}

async function build(overlay: string): Promise<KubeObject[]> {
  const built = await kubectl(['kustomize', join(CONFIG_DIR, overlay)]);
  expect(built.stderr).toBe('');
  expect(built.code).toBe(0);
  return parseManifests(built.stdout);
}

/** The Secret names of every `secretKeyRef` in the objects' environment variables. */
function secretKeyRefNames(objects: KubeObject[]): string[] {
  const names: string[] = [];
  JSON.stringify(objects, (key, value: unknown) => {
    if (key === 'secretKeyRef') names.push((value as { name: string }).name);
    return value;
  });
  return names;
}

// The audit trail's PostgreSQL is the user's in every overlay (docs/kustomize.md): only the ACL API reads it.
const AUDIT_DATABASE_SECRET = 'policy-grant-operator-audit-database';
const AUDIT_CHAIN_KEY_SECRET = 'policy-grant-operator-audit-chain-key';

describe('config/ and the chart do not drift apart', () => {
  it('config/rbac, config/manager, config/admission, config/spicedb and config/crd/kustomization.yaml are exactly what the chart renders', () => {
    const committed = GENERATED_CONFIG_DIRS.flatMap((folder) =>
      readdirSync(join(CONFIG_DIR, folder)).map((file) => `config/${folder}/${file}`),
    );
    expect([...committed, 'config/crd/kustomization.yaml'].sort(), REGENERATE).toEqual(
      generated.map((file) => file.path).sort(),
    );
    for (const file of generated)
      expect(readFileSync(join(REPO_ROOT, file.path), 'utf8'), REGENERATE).toBe(file.content);
  });

  it('the RBAC rules config/default installs are the chart RBAC rules, role by role', async () => {
    const rulesByRole = (objects: KubeObject[]) =>
      Object.fromEntries(
        objects
          .filter((object) => object.kind === 'ClusterRole' || object.kind === 'Role')
          .map((role) => [`${role.kind}/${role.metadata.name}`, role.rules]),
      );
    const chart = parseManifests(
      await helmTemplate((await packagingTools()).helm, { ...CONFIG_RELEASE, values: CONFIG_VALUES }),
    );
    expect(rulesByRole(await build('default'))).toEqual(rulesByRole(chart));
  });
});

describe('kustomize overlays on the kube-apiserver (server-side dry-run, Pod Security restricted)', () => {
  it.each(['default', 'dev'])(
    'config/%s: every object is accepted, after config/crd, without a warning',
    async (overlay) => {
      const namespace = await createRestrictedNamespace(`kustomize-${overlay}`);
      const objects = await buildInto(overlay, namespace);
      expect(
        objects.filter((object) => object.kind === 'Namespace').map((object) => object.metadata.name),
      ).toEqual([namespace]);
      const crds = await applyDryRun(await build('crd'));
      expect(crds.code).toBe(0);
      const applied = await applyDryRun(objects);
      expect(applied.stderr).toBe('');
      expect(applied.code).toBe(0);
      const pods = podsOfWorkloads(objects);
      // The three services and the audit migrations Job, and the read-only SpiceDB in default or the bundled
      // SpiceDB in dev.
      expect(pods).toHaveLength(5);
      const created = await createDryRun(pods);
      expect(created.stderr).toBe('');
      expect(created.code).toBe(0);
    },
  );

  it('config/dev wires the bundled SpiceDB: one generated Secret feeds it, the controller and the decision service', async () => {
    const objects = await build('dev');
    // The memory datastore cannot be shared: no read-only SpiceDB in dev.
    expect(objects.filter((object) => componentOf(object) === 'spicedb-read-only')).toEqual([]);
    const secret = objects.find((object) => object.kind === 'Secret');
    const references = secretKeyRefNames(objects).filter(
      (name) => ![AUDIT_DATABASE_SECRET, AUDIT_CHAIN_KEY_SECRET].includes(name),
    );
    expect(new Set(references)).toEqual(new Set([secret?.metadata.name]));
    // Endpoint and key for each of the two SpiceDB clients (the ACL API is none), the key for SpiceDB itself.
    expect(references).toHaveLength(2 * 2 + 1);
  });

  it('config/default expects the SpiceDB, audit database and chain key Secrets from the user and creates none', async () => {
    const objects = await build('default');
    expect(objects.some((object) => object.kind === 'Secret')).toBe(false);
    expect(new Set(secretKeyRefNames(objects))).toEqual(
      new Set([...Object.values(CONFIG_SPICEDB_SECRETS), AUDIT_DATABASE_SECRET, AUDIT_CHAIN_KEY_SECRET]),
    );
  });
});

describe('config/default: the decision service reads through a SpiceDB that cannot write', () => {
  it('points the decision service at the read-only SpiceDB and its own key; only the controller gets the writing key', async () => {
    const objects = await build('default');
    const readOnly = container(objects, 'spicedb-read-only');
    expect(readOnly.args).toEqual(expect.arrayContaining(['serve', '--datastore-readonly']));
    const service = objects.find(
      (object) => object.kind === 'Service' && componentOf(object) === 'spicedb-read-only',
    );
    const port = (service?.spec as { ports: { port: number }[] }).ports[0]?.port;
    const decision = container(objects, 'decision-service');
    expect(envValue(decision, 'SPICEDB_ENDPOINT')).toBe(
      `${service?.metadata.name}.${CONFIG_RELEASE.namespace}.svc:${port}`,
    );
    expect(envValue(decision, 'SPICEDB_TOKEN')).toEqual(envValue(readOnly, 'SPICEDB_GRPC_PRESHARED_KEY'));
    expect(envValue(readOnly, 'SPICEDB_GRPC_PRESHARED_KEY')).toEqual({
      secretKeyRef: { name: CONFIG_SPICEDB_SECRETS.readOnly, key: 'presharedKey' },
    });
    const holders = objects.filter((object) =>
      secretKeyRefNames([object]).includes(CONFIG_SPICEDB_SECRETS.writer),
    );
    expect(holders.map(componentOf)).toEqual(['controller']);
  });

  it("the read-only SpiceDB's gRPC port admits the decision service alone, in the chart's default render and in config/default", async () => {
    const readOnlyPolicies = (objects: KubeObject[]) =>
      objects.filter(
        (object) => object.kind === 'NetworkPolicy' && componentOf(object) === 'spicedb-read-only',
      );
    const chart = parseManifests(
      await helmTemplate((await packagingTools()).helm, { ...CONFIG_RELEASE, values: CONFIG_VALUES }),
    );
    for (const policies of [readOnlyPolicies(chart), readOnlyPolicies(await build('default'))]) {
      expect(policies).toHaveLength(1);
      const { ingress } = policies[0]?.spec as { ingress: { ports: { port: string }[]; from?: unknown }[] };
      const grpc = ingress.filter((rule) => rule.ports.some((port) => port.port === 'grpc'));
      expect(grpc).toEqual([
        {
          ports: [{ port: 'grpc', protocol: 'TCP' }],
          from: [
            {
              podSelector: {
                matchLabels: {
                  'app.kubernetes.io/name': 'policy-grant-operator',
                  'app.kubernetes.io/instance': CONFIG_RELEASE.release,
                  'app.kubernetes.io/component': 'decision-service',
                },
              },
            },
          ],
        },
      ]);
    }
  });

  it('the decision service’s key, on a SpiceDB run with the read-only SpiceDB’s flags, refuses a write', async () => {
    const objects = await build('default');
    const readOnly = container(objects, 'spicedb-read-only');
    const datastoreFlags = readOnly.args.filter(
      (arg) => arg.startsWith('--datastore-') && !arg.startsWith('--datastore-engine='),
    );
    expect(datastoreFlags).toContain('--datastore-readonly');
    const stateDir = await makeStateDir('kustomize-read-only');
    const datastore = { engine: 'postgres' as const, url: (await testDatabase('kustomize_read_only')).url };
    const binary = await spicedbBinary();
    const writer = await startSpiceDB({ binary, stateDir, name: 'spicedb-writer', datastore });
    const server = await startSpiceDB({
      binary,
      stateDir,
      name: 'spicedb-read-only',
      datastore,
      extraArgs: datastoreFlags,
    });
    try {
      await expectWritesRefused(server, writer);
    } finally {
      await server.process.stop();
      await writer.process.stop();
      await rm(stateDir, { recursive: true, force: true });
    }
  });
});

function componentOf(object: KubeObject): string | undefined {
  return object.metadata.labels?.['app.kubernetes.io/component'];
}

interface Container {
  args: string[];
  env: { name: string; value?: string; valueFrom?: unknown }[];
}

function container(objects: KubeObject[], component: string): Container {
  const found = objects.find((object) => object.kind === 'Deployment' && componentOf(object) === component);
  const template = (found?.spec as { template: PodTemplate } | undefined)?.template;
  const [first] = (template?.spec.containers ?? []) as Container[];
  if (!first) throw new Error(`no Deployment for ${component}`);
  return { args: first.args ?? [], env: first.env };
}

function envValue({ env }: Container, name: string): unknown {
  const variable = env.find((candidate) => candidate.name === name);
  return variable?.value ?? variable?.valueFrom;
}

describe('config/production: the SpiceDB of the production topology', () => {
  it('is accepted by the kube-apiserver under Pod Security restricted, without a warning', async () => {
    const namespace = await createRestrictedNamespace('kustomize-production');
    const objects = await buildInto('production', namespace);
    const applied = await applyDryRun(objects);
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(0);
    const created = await createDryRun(podsOfWorkloads(objects));
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
  });

  it('runs two replicas that dispatch through a headless Service, each migrated to head before it serves', async () => {
    const objects = await build('production');
    const spicedb = objects.find((object) => object.kind === 'Deployment');
    const spec = spicedb?.spec as { replicas: number; template: PodTemplate };
    expect(spec.replicas).toBe(2);
    const [migrate] = spec.template.spec.initContainers as Container[];
    expect(migrate?.args.slice(0, 3)).toEqual(['datastore', 'migrate', 'head']);
    const [serve] = spec.template.spec.containers as Container[];
    expect(serve?.args).toEqual(
      expect.arrayContaining([
        '--dispatch-cluster-enabled=true',
        '--dispatch-upstream-addr=kubernetes:///spicedb-dispatch.$(POD_NAMESPACE):50053',
        '--watch-api-heartbeat=100ms',
      ]),
    );
    const dispatch = objects.find(
      (object) => object.metadata.name === 'spicedb-dispatch' && object.kind === 'Service',
    );
    expect(dispatch?.spec).toMatchObject({ clusterIP: 'None', ports: [{ port: 50053 }] });
  });
});

describe('config/crd, installed apart', () => {
  // `kubectl delete -k config/default` deletes what config/default builds: were the CRDs in it, every grant too.
  it.each(['default', 'dev'])('config/%s renders no CustomResourceDefinition', async (overlay) => {
    const objects = await build(overlay);
    expect(objects.filter(isCrd)).toEqual([]);
    expect(objects.some((object) => object.kind === 'Deployment')).toBe(true);
  });

  it('config/crd builds every CRD with the labels the chart gives them, the version among them', async () => {
    const crds = await build('crd');
    const chart = parseManifests(
      await helmTemplate((await packagingTools()).helm, { ...CONFIG_RELEASE, values: CONFIG_VALUES }),
    );
    expect(crds.map((crd) => crd.metadata.name).sort()).toEqual(
      chart
        .filter(isCrd)
        .map((crd) => crd.metadata.name)
        .sort(),
    );
    const version = chart.find(isCrd)?.metadata.labels?.['app.kubernetes.io/version'];
    expect(version).toMatch(/^\d+\.\d+\.\d+/);
    for (const crd of crds)
      expect(crd.metadata.labels).toMatchObject({
        'app.kubernetes.io/version': version,
        'app.kubernetes.io/managed-by': 'kustomize',
      });
  });
});

describe('config/samples', () => {
  it('builds, and its CatalogItem and grants pass the CRDs in a namespace bound to the sample organisation', async () => {
    const samples = await build('samples');
    const boundNamespace = samples.find((object) => object.kind === 'Namespace') as KubeObject;
    const organisation = boundNamespace.metadata.labels?.['acl.policygrant.dev/organisation'] as string;
    const namespace = await createTestNamespace('samples', {
      'acl.policygrant.dev/organisation': organisation,
    });
    const objects = samples
      .filter((object) => object.kind !== 'Namespace')
      .map((object) =>
        object.metadata.namespace ? { ...object, metadata: { ...object.metadata, namespace } } : object,
      );
    expect(objects.map((object) => object.kind).sort()).toEqual([
      'CatalogItem',
      'PolicyGrant',
      'PolicyGrant',
    ]);
    const applied = await applyDryRun(objects);
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(0);
  });

  it('the kubebuilder layout is complete', () => {
    for (const folder of ['crd', 'rbac', 'manager', 'admission', 'spicedb', 'samples', 'default', 'dev'])
      expect(existsSync(join(CONFIG_DIR, folder, 'kustomization.yaml')), folder).toBe(true);
  });
});
