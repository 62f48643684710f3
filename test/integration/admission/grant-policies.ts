import { randomUUID } from 'node:crypto';
import { KubernetesObjectApi, type KubernetesObject } from '@kubernetes/client-node';
import { expect } from 'vitest';
import { GROUP_VERSION, POLICY_GRANT_KIND, type PolicyGrant } from '../../../src/api/v1alpha1/index.js';
import { REQUESTER_ANNOTATION } from '../../../src/controller/audit/kubernetes-actor.js';
import { until } from '../../../dev/wait/until.js';
import { testKubeConfig, uniqueId } from '../support/cluster.js';
import type { KubeObject } from '../../../hack/sync-packaging.js';
import { kubectl, renderChart, REQUIRED_VALUES, toYamlStream } from '../packaging/packaging-support.js';

// The chart's admission policies on PolicyGrants (templates/grant-admission-policies.yaml), installed on the
// test run's kube-apiserver as a release renders them, their bindings confined to the namespaces of one test
// file (the run's other files write grants as the admin, which these policies would judge too), and writes made
// as kubectl makes them, as an impersonated user with the field manager of the caller's choice.

/** The components of the grant policies, as the chart labels them. */
const GRANT_POLICY_COMPONENTS = ['grant-marks', 'grant-requester'];

/** Where the release is rendered: the ACL API's username names it; no pod runs there. */
const RELEASE_NAMESPACE = 'policy-grant-tests';

export interface GrantPolicies {
  /** The username the policies take for the ACL API's: its ServiceAccount in the rendered release. */
  aclApiUser: string;
  /** The name of the grant-requester policies (the mutating one and its validating check). */
  requesterPolicy: string;
  /** Binds the policies to these namespaces only, and waits until they judge writes there. */
  install(namespaces: string[]): Promise<void>;
  remove(): Promise<void>;
}

/** The grant policies of a release of their own (cluster-scoped objects, so one release per test file). */
export function grantPolicies(): GrantPolicies {
  const release = uniqueId('grants').slice(0, 20);
  const aclApiUser = `system:serviceaccount:${RELEASE_NAMESPACE}:${release}-policy-grant-operator-acl-api`;
  const created: KubernetesObject[] = [];
  const api = () => testKubeConfig().makeApiClient(KubernetesObjectApi);
  return {
    aclApiUser,
    requesterPolicy: `${release}-policy-grant-operator-grant-requester`,
    async install(namespaces) {
      const objects = (await renderChart(RELEASE_NAMESPACE, REQUIRED_VALUES, release)).filter((object) =>
        GRANT_POLICY_COMPONENTS.includes(object.metadata.labels?.['app.kubernetes.io/component'] ?? ''),
      );
      expect(objects.map((object) => object.kind).sort()).toEqual([
        'MutatingAdmissionPolicy',
        'MutatingAdmissionPolicyBinding',
        'ValidatingAdmissionPolicy',
        'ValidatingAdmissionPolicy',
        'ValidatingAdmissionPolicyBinding',
        'ValidatingAdmissionPolicyBinding',
      ]);
      const namespaceSelector = {
        matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: namespaces }],
      };
      for (const object of objects.map((candidate) => confinedBinding(candidate, namespaceSelector)))
        created.push(await api().create(object as KubernetesObject));
      await until(() => policiesJudge(namespaces[0] as string), 'the grant policies to judge writes');
    },
    async remove() {
      for (const object of created.reverse()) await api().delete(object);
    },
  };
}

/** A binding that binds only in the namespaces `namespaceSelector` selects (a policy as it is). */
export function confinedBinding(object: KubeObject, namespaceSelector: object): KubeObject {
  if (!object.kind.endsWith('Binding')) return object;
  return {
    ...object,
    spec: { ...(object.spec as object), matchResources: { namespaceSelector } },
  } as KubeObject;
}

/**
 * The API server loads new policies asynchronously: both judge once a dry-run create as another user gets the
 * requester's stamp and one that sets an issuer is refused.
 */
async function policiesJudge(namespace: string): Promise<boolean> {
  const probe = grantObject(namespace, uniqueId('probe'), grantSpec());
  const stamped = await writeAs('probe-user', 'create', probe, { dryRun: true });
  if (stamped.object?.metadata.annotations?.[REQUESTER_ANNOTATION] !== 'probe-user') return false;
  const issued = { ...probe, spec: { ...probe.spec, issuerId: randomUUID() } };
  return (await writeAs('probe-user', 'create', issued, { dryRun: true })).code !== 0;
}

/** An INDIVIDUAL grant's spec on an item of its own, for a day, with `extra`. */
export function grantSpec(extra: Partial<PolicyGrant['spec']> = {}): PolicyGrant['spec'] {
  return {
    policyType: 'INDIVIDUAL',
    userId: randomUUID(),
    itemId: `urn:test:item:${randomUUID()}`,
    itemType: 'DATABANK',
    expiryTime: new Date(Date.now() + 86_400_000).toISOString(),
    constraints: { access: [{ accessType: 'api' }] },
    ...extra,
  };
}

export function grantObject(
  namespace: string,
  name: string,
  spec: PolicyGrant['spec'],
  metadata: Partial<PolicyGrant['metadata']> = {},
): PolicyGrant {
  return {
    apiVersion: GROUP_VERSION,
    kind: POLICY_GRANT_KIND,
    metadata: { ...metadata, name, namespace },
    spec,
  };
}

export interface Write {
  code: number | null;
  stderr: string;
  /** The object the API server answered (stored, or as it would be on a dry run). */
  object?: PolicyGrant;
}

/**
 * `kubectl create` or `kubectl replace` of `grant` as `user` (impersonated, in system:masters so that RBAC lets
 * it: only admission decides), with `--field-manager` when given.
 */
export async function writeAs(
  user: string,
  verb: 'create' | 'replace',
  grant: PolicyGrant,
  options: { fieldManager?: string; dryRun?: boolean } = {},
): Promise<Write> {
  const args = [
    verb,
    '-f',
    '-',
    '-o',
    'json',
    `--as=${user}`,
    '--as-group=system:masters',
    ...(options.fieldManager ? [`--field-manager=${options.fieldManager}`] : []),
    ...(options.dryRun ? ['--dry-run=server'] : []),
  ];
  const result = await kubectl(args, toYamlStream([grant]));
  return {
    code: result.code,
    stderr: result.stderr,
    ...(result.code === 0 ? { object: JSON.parse(result.stdout) as PolicyGrant } : {}),
  };
}
