import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AdmissionregistrationV1Api,
  CoreV1Api,
  KubernetesObjectApi,
  type KubernetesObject,
  type V1Namespace,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../../hack/sync-packaging.js';
import { ADMISSION_KINDS, applyAdmissionPolicies } from '../../../dev/stack/admission-policy.js';
import { readManifests } from '../../../dev/stack/manifests.js';
import { ORGANISATION_LABEL } from '../../../src/verdict/namespace-authorisation.js';
import { until } from '../../../dev/wait/until.js';
import { confinedBinding } from './grant-policies.js';
import { testKubeConfig, uniqueId } from '../support/cluster.js';
import {
  kubectl,
  renderChart,
  REQUIRED_VALUES,
  toYamlStream,
  type KubeObject,
} from '../packaging/packaging-support.js';
import {
  serviceAccountKubeConfig,
  type ServiceAccountSession,
} from '../packaging/service-account-kubeconfig.js';

// The chart's ValidatingAdmissionPolicy on the real kube-apiserver: binding a namespace to an organisation (its
// label acl.policygrant.dev/organisation) is a privilege per organisation, checked on every path that can change
// a namespace's labels: create, update of the namespace, and update or patch of its status and finalize
// subresources (their strategies keep metadata changes). Identities: users the admin impersonates (with the
// groups it names) and a ServiceAccount with a real token, which the values make a binder of one organisation.

const BINDERS_GROUP = 'policy-grant-operator:namespace-binders';
const NAMESPACE_RESOURCES = ['namespaces', 'namespaces/status', 'namespaces/finalize'];
const NAMESPACE_RIGHTS = ['get', 'create', 'update', 'patch'];
/** The organisation the ServiceAccount and the group tenant-a-platform may bind to (chart values). */
const ORG_A = randomUUID();
const TENANT_A_GROUP = 'tenant-a-platform';

const admin = () => testKubeConfig();
const adminCore = () => admin().makeApiClient(CoreV1Api);
const created: KubernetesObject[] = [];
const namespaces: string[] = [];
let policyName: string;
let tenantAccount: ServiceAccountSession;
let tenantCore: CoreV1Api;

const intruder: Impersonated = { user: 'intruder', groups: ['tenants'] };
const platform: Impersonated = { user: 'platform-admin', groups: [BINDERS_GROUP] };
const tenantA: Impersonated = { user: 'tenant-a-admin', groups: [`${BINDERS_GROUP}:${ORG_A}`] };
const tenantAPlatform: Impersonated = { user: 'tenant-a-platform', groups: [TENANT_A_GROUP] };
const IMPERSONATED = [intruder, platform, tenantA, tenantAPlatform];

/** Full rights on namespaces and their subresources, for `subjects`: only the policy takes binding away. */
function namespaceRights(subjects: object[]): KubeObject[] {
  const name = uniqueId('namespace-rights');
  return [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name },
      rules: [{ apiGroups: [''], resources: NAMESPACE_RESOURCES, verbs: NAMESPACE_RIGHTS }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects,
    },
  ];
}

async function createAsAdmin(objects: KubeObject[]): Promise<void> {
  const api = admin().makeApiClient(KubernetesObjectApi);
  for (const object of objects) created.push(await api.create(object as KubernetesObject));
}

/** A namespace of this file (deleted after it), with labels. */
function namespaceBody(name: string, labels: Record<string, string>): V1Namespace {
  namespaces.push(name);
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } };
}

/** The organisation label of the namespace `name`; undefined when it has none or does not exist. */
async function labelOf(name: string): Promise<string | undefined> {
  const namespace = await adminCore()
    .readNamespace({ name })
    .catch((error: { code?: number }) => {
      if (error.code === 404) return undefined;
      throw error;
    });
  return namespace?.metadata?.labels?.[ORGANISATION_LABEL];
}

/** An unbound namespace the admin made, or one bound to `organisation`. */
async function adminNamespace(organisation?: string): Promise<string> {
  const name = uniqueId('binding');
  const labels: Record<string, string> = organisation ? { [ORGANISATION_LABEL]: organisation } : {};
  await adminCore().createNamespace({ body: namespaceBody(name, labels) });
  return name;
}

/** A user the admin impersonates: its name and groups are all the policy sees. */
interface Impersonated {
  user: string;
  groups: string[];
}

const impersonation = ({ user, groups }: Impersonated) => [
  `--as=${user}`,
  ...groups.map((group) => `--as-group=${group}`),
];

/** The namespace `name` with the organisation label set to `organisation` (null: removed). */
async function relabelled(name: string, organisation: string | null): Promise<V1Namespace> {
  const namespace = await adminCore().readNamespace({ name });
  const others = Object.entries(namespace.metadata?.labels ?? {}).filter(
    ([key]) => key !== ORGANISATION_LABEL,
  );
  const labels = Object.fromEntries(
    organisation === null ? others : [...others, [ORGANISATION_LABEL, organisation]],
  );
  return { apiVersion: 'v1', kind: 'Namespace', ...namespace, metadata: { ...namespace.metadata, labels } };
}

interface KubectlCall {
  args: string[];
  input?: string;
}

type LabelPath = (name: string, organisation: string | null) => Promise<KubectlCall>;

/** Each path that changes the labels of an existing namespace: sets its label to `organisation` (null: removes). */
const UPDATE_PATHS: Record<string, LabelPath> = {
  'update namespaces': async (name, organisation) => ({
    args: ['replace', '-f', '-'],
    input: JSON.stringify(await relabelled(name, organisation)),
  }),
  'patch namespaces/status': async (name, organisation) => {
    const patch = JSON.stringify({ metadata: { labels: { [ORGANISATION_LABEL]: organisation } } });
    return { args: ['patch', 'namespace', name, '--subresource=status', '--type=merge', '-p', patch] };
  },
  'update namespaces/finalize': async (name, organisation) => ({
    args: ['replace', '--raw', `/api/v1/namespaces/${name}/finalize`, '-f', '-'],
    input: JSON.stringify(await relabelled(name, organisation)),
  }),
};

/** Creating the namespace `name` with the label. */
const createPath: LabelPath = async (name, organisation) => ({
  args: ['create', '-f', '-'],
  input: toYamlStream([
    namespaceBody(name, organisation === null ? {} : { [ORGANISATION_LABEL]: organisation }),
  ]),
});

const PATHS: Record<string, LabelPath> = { 'create namespaces': createPath, ...UPDATE_PATHS };

interface Attempt {
  name: string;
  code: number | null;
  stderr: string;
}

/** Takes `path` as `who` (kubectl, impersonated) to set the label of a namespace bound to `from` (or not) to `to`. */
async function bind(path: string, who: Impersonated, to: string | null, from?: string): Promise<Attempt> {
  const creates = PATHS[path] === createPath;
  const name = creates ? uniqueId('binding') : await adminNamespace(from);
  const call = await (PATHS[path] as LabelPath)(name, to);
  const result = await kubectl([...call.args, ...impersonation(who)], call.input);
  return { name, code: result.code, stderr: result.stderr };
}

function expectRefused(result: Attempt, who: Impersonated, organisation: string): void {
  expect(result.code).not.toBe(0);
  expect(result.stderr).toContain(`ValidatingAdmissionPolicy '${policyName}'`);
  expect(result.stderr).toContain(`${who.user} may not bind namespaces to the organisation ${organisation}`);
}

async function expectBound(result: Attempt, organisation: string | undefined): Promise<void> {
  expect(result.stderr).toBe('');
  expect(await labelOf(result.name)).toBe(organisation);
}

/** What the API server answers the ServiceAccount: 'ok', or the message of the refusal. */
async function outcome(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return 'ok';
  } catch (error) {
    return JSON.parse((error as { body?: string }).body ?? '{}').message ?? String(error);
  }
}

beforeAll(async () => {
  const home = uniqueId('admission');
  await adminCore().createNamespace({ body: namespaceBody(home, {}) });
  const account = uniqueId('tenant-a');
  const accountUser = `system:serviceaccount:${home}:${account}`;
  tenantAccount = await serviceAccountKubeConfig(admin(), [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: account, namespace: home } },
    ...namespaceRights([{ kind: 'ServiceAccount', name: account, namespace: home }]),
  ]);
  tenantCore = tenantAccount.kubeConfig.makeApiClient(CoreV1Api);
  const users = IMPERSONATED.map(({ user }) => ({
    apiGroup: 'rbac.authorization.k8s.io',
    kind: 'User',
    name: user,
  }));
  await createAsAdmin(namespaceRights(users));
  // The shipped policy, under a release of its own (its objects are cluster-wide), with ORG_A's binders set.
  const values = {
    ...REQUIRED_VALUES,
    namespaceBindingPolicy: {
      organisationBinders: { [ORG_A]: { users: [accountUser], groups: [TENANT_A_GROUP] } },
    },
  };
  // Only this policy: the grant policies would judge the run's other files' grants (grant-policies.test.ts).
  const policy = (await renderChart(home, values, uniqueId('vap'))).filter(
    (o) =>
      ADMISSION_KINDS.has(o.kind) &&
      o.metadata.labels?.['app.kubernetes.io/component'] === 'namespace-binding',
  );
  expect(policy.map((object) => object.kind).sort()).toEqual([
    'ValidatingAdmissionPolicy',
    'ValidatingAdmissionPolicyBinding',
  ]);
  policyName = policy[0]?.metadata.name as string;
  await createAsAdmin(policy);
  // The API server loads a new policy asynchronously: wait until it refuses a dry-run bind.
  const probe = namespaceBody(uniqueId('probe'), { [ORGANISATION_LABEL]: randomUUID() });
  await until(
    async () => (await outcome(tenantCore.createNamespace({ body: probe, dryRun: 'All' }))) !== 'ok',
    'the admission policy to refuse a binding',
  );
});

afterAll(async () => {
  await tenantAccount?.dispose();
  const api = admin().makeApiClient(KubernetesObjectApi);
  for (const object of created.reverse()) await api.delete(object).catch(() => undefined);
  for (const name of namespaces)
    await adminCore()
      .deleteNamespace({ name })
      .catch(() => undefined);
});

it('matches every subresource of namespaces the API server serves', async () => {
  const discovery = await kubectl(['get', '--raw', '/api/v1']);
  const served = (JSON.parse(discovery.stdout) as { resources: { name: string }[] }).resources
    .map((resource) => resource.name)
    .filter((name) => name === 'namespaces' || name.startsWith('namespaces/'));
  const policy = await admin()
    .makeApiClient(AdmissionregistrationV1Api)
    .readValidatingAdmissionPolicy({ name: policyName });
  const matched = policy.spec?.matchConstraints?.resourceRules?.flatMap((rule) => rule.resources ?? []);
  expect(served.sort()).toEqual(NAMESPACE_RESOURCES.sort());
  expect(matched?.sort()).toEqual(NAMESPACE_RESOURCES.sort());
});

describe.each(Object.keys(PATHS))('through %s', (path) => {
  it('a user in none of the binders groups may not bind a namespace', async () => {
    const organisation = randomUUID();
    const result = await bind(path, intruder, organisation);
    expectRefused(result, intruder, organisation);
    if (!path.startsWith('create')) expect(await labelOf(result.name)).toBeUndefined();
  });

  it(`a member of ${BINDERS_GROUP} binds a namespace to any organisation`, async () => {
    const organisation = randomUUID();
    await expectBound(await bind(path, platform, organisation), organisation);
  });

  it('a binder of organisation A (its group, or a group the values list) binds to A, not to B', async () => {
    for (const binder of [tenantA, tenantAPlatform]) {
      await expectBound(await bind(path, binder, ORG_A), ORG_A);
      const other = randomUUID();
      expectRefused(await bind(path, binder, other), binder, other);
    }
  });
});

describe.each(Object.keys(UPDATE_PATHS))('through %s', (path) => {
  it('a binder of organisation A may not move or unbind a namespace of organisation B', async () => {
    const other = randomUUID();
    const moved = await bind(path, tenantA, ORG_A, other);
    expectRefused(moved, tenantA, other);
    expect(await labelOf(moved.name)).toBe(other);
    const unbound = await bind(path, tenantA, null, other);
    expectRefused(unbound, tenantA, other);
    expect(await labelOf(unbound.name)).toBe(other);
  });

  it('a binder of organisation A unbinds a namespace of A', async () => {
    await expectBound(await bind(path, tenantA, null, ORG_A), undefined);
  });
});

describe('a ServiceAccount the values make a binder of organisation A (its own token)', () => {
  const accountName = () => `system:serviceaccount:${tenantAccount.namespace}:${tenantAccount.name}`;

  it('creates namespaces bound to A, and binds and unbinds its namespaces to A', async () => {
    const bound = uniqueId('binding');
    expect(
      await outcome(
        tenantCore.createNamespace({ body: namespaceBody(bound, { [ORGANISATION_LABEL]: ORG_A }) }),
      ),
    ).toBe('ok');
    const name = uniqueId('binding');
    expect(await outcome(tenantCore.createNamespace({ body: namespaceBody(name, { team: 'a' }) }))).toBe(
      'ok',
    );
    expect(await outcome(tenantCore.replaceNamespace({ name, body: await relabelled(name, ORG_A) }))).toBe(
      'ok',
    );
    expect(await labelOf(name)).toBe(ORG_A);
    expect(await outcome(tenantCore.replaceNamespace({ name, body: await relabelled(name, null) }))).toBe(
      'ok',
    );
    expect(await labelOf(name)).toBeUndefined();
  });

  it('may not bind to another organisation, by create, update or the finalize subresource', async () => {
    const other = randomUUID();
    const refusal = `${accountName()} may not bind namespaces to the organisation ${other}`;
    const body = namespaceBody(uniqueId('binding'), { [ORGANISATION_LABEL]: other });
    expect(await outcome(tenantCore.createNamespace({ body }))).toContain(refusal);
    const name = uniqueId('binding');
    await tenantCore.createNamespace({ body: namespaceBody(name, {}) });
    const rebound = await relabelled(name, other);
    expect(await outcome(tenantCore.replaceNamespace({ name, body: rebound }))).toContain(refusal);
    expect(await outcome(tenantCore.replaceNamespaceFinalize({ name, body: rebound }))).toContain(refusal);
    expect(await labelOf(name)).toBeUndefined();
  });

  it('may still create namespaces and add, change and remove other labels', async () => {
    const name = uniqueId('binding');
    await tenantCore.createNamespace({ body: namespaceBody(name, { team: 'a' }) });
    const namespace = await tenantCore.readNamespace({ name });
    const metadata = { ...namespace.metadata, labels: { team: 'b', tier: 'gold' } };
    expect(await outcome(tenantCore.replaceNamespace({ name, body: { ...namespace, metadata } }))).toBe('ok');
    expect((await tenantCore.readNamespace({ name })).metadata?.labels).toMatchObject({ team: 'b' });
  });
});

describe('the development stack', () => {
  it('installs config/admission, and replaces it with the current version when started again', async () => {
    // config/admission as it is, but for the grant policies' bindings, confined to no namespace: bound to every
    // namespace they would judge the run's other files' grants (grant-policies.test.ts tests them).
    const dir = await mkdtemp(join(tmpdir(), 'admission-'));
    const objects = ((await readManifests(join(REPO_ROOT, 'config/admission'))) as KubeObject[]).filter(
      (object) => ADMISSION_KINDS.has(object.kind),
    );
    await writeFile(join(dir, 'admission.yaml'), toYamlStream(objects.map(confinedToNoNamespace)));
    const names = objects.map((object) => `${object.kind}/${object.metadata.name}`);
    expect(names).toContain('ValidatingAdmissionPolicy/policy-grant-operator-namespace-binding');
    expect(names).toContain('ValidatingAdmissionPolicyBinding/policy-grant-operator-namespace-binding');
    expect(names).toContain('MutatingAdmissionPolicy/policy-grant-operator-grant-requester');
    expect(names).toContain('ValidatingAdmissionPolicy/policy-grant-operator-grant-marks');
    try {
      expect(await applyAdmissionPolicies(admin(), dir)).toEqual(names);
      expect(await applyAdmissionPolicies(admin(), dir)).toEqual(names);
      const policy = await admin()
        .makeApiClient(AdmissionregistrationV1Api)
        .readValidatingAdmissionPolicy({ name: 'policy-grant-operator-namespace-binding' });
      expect(policy.metadata?.generation).toBe(1);
      expect(policy.spec?.matchConditions?.[0]?.expression).toContain(ORGANISATION_LABEL);
    } finally {
      const api = admin().makeApiClient(KubernetesObjectApi);
      for (const object of objects.reverse()) await api.delete(object as KubernetesObject);
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/** The bindings of the grant policies with a namespace selector no namespace matches. */
function confinedToNoNamespace(object: KubeObject): KubeObject {
  const component = object.metadata.labels?.['app.kubernetes.io/component'] ?? '';
  if (!component.startsWith('grant-')) return object;
  return confinedBinding(object, { matchLabels: { 'test.policygrant.dev/no-namespace': 'true' } });
}
