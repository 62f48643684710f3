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
import { ADMISSION_KINDS, applyAdmissionPolicies } from '../../../src/devstack/admission-policy.js';
import { ORGANISATION_LABEL } from '../../../src/verdict/namespace-authorisation.js';
import { until } from '../../support/until.js';
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
// label acl.policygrant.dev/organisation) is a privilege of the configured groups. A ServiceAccount with every
// right on namespaces may create and label them, but not add, change or remove that label; a member of the
// chart's default group policy-grant-operator:namespace-binders may.

const BINDERS_GROUP = 'policy-grant-operator:namespace-binders';
const GITOPS_USER = 'gitops';
const NAMESPACE_RIGHTS = ['get', 'create', 'update', 'patch'];

const admin = () => testKubeConfig();
const organisation = () => uniqueId('org');
const created: KubernetesObject[] = [];
const namespaces: string[] = [];
let policyName: string;
let namespaceAdmin: ServiceAccountSession;
let core: CoreV1Api;

/** A ServiceAccount with full rights on namespaces, through a ClusterRole of its own. */
function namespaceAdminRbac(namespace: string): KubeObject[] {
  const name = uniqueId('namespace-admin');
  const metadata = { name };
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata,
      rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: NAMESPACE_RIGHTS }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata,
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ kind: 'ServiceAccount', name, namespace }],
    },
  ];
}

/** The same rights for the user the admin impersonates, whatever its groups: only the policy looks at them. */
function gitOpsUserRbac(): KubeObject[] {
  const name = uniqueId('gitops');
  return [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name },
      rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: NAMESPACE_RIGHTS }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: GITOPS_USER }],
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
  return { metadata: { name, labels } };
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

async function relabel(name: string, labels: Record<string, string | null>): Promise<string> {
  const namespace = await core.readNamespace({ name });
  const merged = Object.entries({ ...namespace.metadata?.labels, ...labels }).filter(
    (entry): entry is [string, string] => entry[1] !== null,
  );
  const metadata = { ...namespace.metadata, labels: Object.fromEntries(merged) };
  return outcome(core.replaceNamespace({ name, body: { ...namespace, metadata } }));
}

async function createNamespace(labels: Record<string, string>): Promise<string> {
  const name = uniqueId('binding');
  expect(await outcome(core.createNamespace({ body: namespaceBody(name, labels) }))).toBe('ok');
  return name;
}

/** kubectl as the GitOps user in `group` (the admin impersonates it). */
function asGitOps(group: string, args: string[], input?: string) {
  return kubectl([...args, `--as=${GITOPS_USER}`, `--as-group=${group}`], input);
}

function expectRefusedByPolicy(message: string): void {
  expect(message).toContain(`ValidatingAdmissionPolicy '${policyName}'`);
  expect(message).toContain(`the label ${ORGANISATION_LABEL}`);
  expect(message).toContain(`system:masters, ${BINDERS_GROUP}`);
  expect(message).toContain(`system:serviceaccount:${namespaceAdmin.namespace}:${namespaceAdmin.name}`);
}

beforeAll(async () => {
  const home = await createHome();
  namespaceAdmin = await serviceAccountKubeConfig(admin(), namespaceAdminRbac(home));
  core = namespaceAdmin.kubeConfig.makeApiClient(CoreV1Api);
  await createAsAdmin(gitOpsUserRbac());
  // The shipped policy with the chart's defaults, under a release of its own (its objects are cluster-wide).
  const policy = (await renderChart(home, REQUIRED_VALUES, uniqueId('vap'))).filter((o) =>
    ADMISSION_KINDS.has(o.kind),
  );
  expect(policy.map((object) => object.kind).sort()).toEqual([...ADMISSION_KINDS].sort());
  policyName = policy[0]?.metadata.name as string;
  await createAsAdmin(policy);
  // The API server loads a new policy asynchronously: wait until it refuses a dry-run bind.
  const probe = namespaceBody(uniqueId('probe'), { [ORGANISATION_LABEL]: organisation() });
  await until(
    async () => (await outcome(core.createNamespace({ body: probe, dryRun: 'All' }))) !== 'ok',
    'the admission policy to refuse a binding',
  );
});

afterAll(async () => {
  await namespaceAdmin?.dispose();
  const api = admin().makeApiClient(KubernetesObjectApi);
  for (const object of created.reverse()) await api.delete(object).catch(() => undefined);
  const adminCore = admin().makeApiClient(CoreV1Api);
  for (const name of namespaces) await adminCore.deleteNamespace({ name }).catch(() => undefined);
});

async function createHome(): Promise<string> {
  const name = uniqueId('admission');
  await admin()
    .makeApiClient(CoreV1Api)
    .createNamespace({ body: namespaceBody(name, {}) });
  return name;
}

describe('a ServiceAccount with full rights on namespaces', () => {
  it('may not create a namespace bound to an organisation', async () => {
    const name = uniqueId('binding');
    const body = namespaceBody(name, { [ORGANISATION_LABEL]: organisation() });
    expectRefusedByPolicy(await outcome(core.createNamespace({ body })));
    expect(await outcome(core.readNamespace({ name }))).toMatch(/not found/);
  });

  it('may not add the label to a namespace it created', async () => {
    const name = await createNamespace({ team: 'a' });
    expectRefusedByPolicy(await relabel(name, { [ORGANISATION_LABEL]: organisation() }));
    expect((await core.readNamespace({ name })).metadata?.labels?.[ORGANISATION_LABEL]).toBeUndefined();
  });

  it('may not change or remove the binding an admin made, but may edit the namespace otherwise', async () => {
    const name = uniqueId('bound');
    const bound = organisation();
    await admin()
      .makeApiClient(CoreV1Api)
      .createNamespace({ body: namespaceBody(name, { [ORGANISATION_LABEL]: bound }) });
    expectRefusedByPolicy(await relabel(name, { [ORGANISATION_LABEL]: organisation() }));
    expectRefusedByPolicy(await relabel(name, { [ORGANISATION_LABEL]: null }));
    expect(await relabel(name, { team: 'b' })).toBe('ok');
    const labels = (await core.readNamespace({ name })).metadata?.labels;
    expect(labels).toMatchObject({ [ORGANISATION_LABEL]: bound, team: 'b' });
  });

  it('may still create namespaces and add, change and remove other labels', async () => {
    const name = await createNamespace({ team: 'a' });
    expect(await relabel(name, { team: 'b', tier: 'gold' })).toBe('ok');
    expect(await relabel(name, { tier: null })).toBe('ok');
    expect((await core.readNamespace({ name })).metadata?.labels).toMatchObject({ team: 'b' });
  });
});

describe(`a member of ${BINDERS_GROUP}`, () => {
  it('may create a bound namespace, and change and remove the binding', async () => {
    const name = uniqueId('gitops');
    const body = {
      apiVersion: 'v1',
      kind: 'Namespace',
      ...namespaceBody(name, { [ORGANISATION_LABEL]: organisation() }),
    };
    const create = await asGitOps(BINDERS_GROUP, ['create', '-f', '-', '-o', 'name'], toYamlStream([body]));
    expect(create.stderr).toBe('');
    const changed = organisation();
    const change = await asGitOps(BINDERS_GROUP, [
      'label',
      'namespace',
      name,
      `${ORGANISATION_LABEL}=${changed}`,
      '--overwrite',
    ]);
    expect(change.stderr).toBe('');
    expect((await core.readNamespace({ name })).metadata?.labels?.[ORGANISATION_LABEL]).toBe(changed);
    const remove = await asGitOps(BINDERS_GROUP, ['label', 'namespace', name, `${ORGANISATION_LABEL}-`]);
    expect(remove.stderr).toBe('');
    expect((await core.readNamespace({ name })).metadata?.labels?.[ORGANISATION_LABEL]).toBeUndefined();
  });

  it('is refused like anyone else without the group: the group, not the RBAC, lets it bind', async () => {
    const name = await createNamespace({});
    const label = ['label', 'namespace', name, `${ORGANISATION_LABEL}=${organisation()}`];
    const refused = await asGitOps('other-group', label);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(`ValidatingAdmissionPolicy '${policyName}'`);
    expect(refused.stderr).toContain(`${GITOPS_USER} is in none of them`);
  });
});

describe('the development stack', () => {
  it('installs config/admission, and replaces it with the current version when started again', async () => {
    const dir = join(REPO_ROOT, 'config/admission');
    const names = [
      'ValidatingAdmissionPolicy/policy-grant-operator-namespace-binding',
      'ValidatingAdmissionPolicyBinding/policy-grant-operator-namespace-binding',
    ];
    try {
      expect(await applyAdmissionPolicies(admin(), dir)).toEqual(names);
      expect(await applyAdmissionPolicies(admin(), dir)).toEqual(names);
      const policy = await admin()
        .makeApiClient(AdmissionregistrationV1Api)
        .readValidatingAdmissionPolicy({ name: 'policy-grant-operator-namespace-binding' });
      expect(policy.metadata?.generation).toBe(1);
      expect(policy.spec?.matchConditions?.[0]?.expression).toContain(ORGANISATION_LABEL);
    } finally {
      const api = admin().makeApiClient(AdmissionregistrationV1Api);
      await api.deleteValidatingAdmissionPolicyBinding({ name: 'policy-grant-operator-namespace-binding' });
      await api.deleteValidatingAdmissionPolicy({ name: 'policy-grant-operator-namespace-binding' });
    }
  });
});
