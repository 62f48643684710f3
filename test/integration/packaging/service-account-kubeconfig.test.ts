import { randomUUID } from 'node:crypto';
import {
  AuthenticationV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  RbacAuthorizationV1Api,
  type KubeConfig,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  API_GROUP,
  API_VERSION,
  CATALOG_ITEM_PLURAL,
  GRANT_CLAIM_PLURAL,
  POLICY_GRANT_PLURAL,
  toKubernetesTime,
} from '../../../src/api/v1alpha1/index.js';
import { claimName, claimObject } from '../../../src/acl/policies/grant-claims.js';
import { individualSpec } from '../../unit/api/spec-examples.js';
import { createTestNamespace, testKubeConfig, uniqueId } from '../support/cluster.js';
import { renderChart, REQUIRED_VALUES, type KubeObject } from './packaging-support.js';
import {
  callStatus,
  permissionsOf,
  rbacOf,
  serviceAccountKubeConfig,
  withoutPermission,
  type ServiceAccountSession,
} from './service-account-kubeconfig.js';

// The helper that runs code as a chart ServiceAccount, proven on the shared kube-apiserver: each account can do
// what its chart RBAC grants, in the namespaces it grants it, and nothing else.

let namespace: string;
let otherNamespace: string;
const sessions: ServiceAccountSession[] = [];

async function renderRbac(component: string): Promise<KubeObject[]> {
  // A release name of its own per call: ClusterRoles are cluster-wide, so sessions must not share their names.
  const values = { ...REQUIRED_VALUES, decisionService: { tokenReview: { enabled: true } } };
  return rbacOf(await renderChart(namespace, values, uniqueId('rbac')), component);
}

async function session(rbac: KubeObject[]): Promise<ServiceAccountSession> {
  const created = await serviceAccountKubeConfig(testKubeConfig(), rbac);
  sessions.push(created);
  return created;
}

const grant = (name: string) => ({
  apiVersion: `${API_GROUP}/${API_VERSION}`,
  kind: 'PolicyGrant',
  metadata: { name },
  spec: individualSpec,
});

function createGrant(kubeConfig: KubeConfig, inNamespace: string) {
  return kubeConfig.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    group: API_GROUP,
    version: API_VERSION,
    namespace: inNamespace,
    plural: POLICY_GRANT_PLURAL,
    body: grant(uniqueId('grant')),
    dryRun: 'All',
  });
}

function createClaim(kubeConfig: KubeConfig, inNamespace: string) {
  const key = { subject: `user:${randomUUID()}` as const, itemId: 'urn:dx:item:1', accessType: 'api' };
  return kubeConfig.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    group: API_GROUP,
    version: API_VERSION,
    namespace: inNamespace,
    plural: GRANT_CLAIM_PLURAL,
    body: claimObject(claimName(key), {
      ...key,
      grantName: 'pg-x',
      state: 'pending',
      pendingSince: toKubernetesTime(new Date()),
    }),
    dryRun: 'All',
  });
}

function listAll(kubeConfig: KubeConfig, plural: string) {
  return kubeConfig
    .makeApiClient(CustomObjectsApi)
    .listClusterCustomObject({ group: API_GROUP, version: API_VERSION, plural });
}

beforeAll(async () => {
  namespace = await createTestNamespace('sa-rbac');
  otherNamespace = await createTestNamespace('sa-rbac-other');
});

afterAll(async () => {
  for (const created of sessions) await created.dispose();
});

describe('serviceAccountKubeConfig', () => {
  it('the ACL API account lists grants everywhere, writes grants and GrantClaims in its namespace only, no ConfigMap', async () => {
    const { kubeConfig, name } = await session(await renderRbac('acl-api'));
    expect(name).toMatch(/-acl-api$/);
    const core = kubeConfig.makeApiClient(CoreV1Api);
    expect(await callStatus(listAll(kubeConfig, POLICY_GRANT_PLURAL))).toBe(200);
    expect(await callStatus(listAll(kubeConfig, CATALOG_ITEM_PLURAL))).toBe(200);
    expect(await callStatus(createGrant(kubeConfig, namespace))).toBe(200);
    expect(await callStatus(createGrant(kubeConfig, otherNamespace))).toBe(403);
    expect(await callStatus(createClaim(kubeConfig, namespace))).toBe(200);
    expect(await callStatus(createClaim(kubeConfig, otherNamespace))).toBe(403);
    const configMap = { metadata: { name: uniqueId('settings') } };
    expect(
      await callStatus(core.createNamespacedConfigMap({ namespace, body: configMap, dryRun: 'All' })),
    ).toBe(403);
    expect(await callStatus(core.listNamespacedSecret({ namespace }))).toBe(403);
    expect(await callStatus(core.deleteNamespace({ name: otherNamespace, dryRun: 'All' }))).toBe(403);
  });

  it('the controller account creates Leases in the release namespace, and renews only its own', async () => {
    const rbac = await renderRbac('controller');
    const { kubeConfig } = await session(rbac);
    const role = rbac.find((object) => object.kind === 'Role') as unknown as {
      rules: { resourceNames?: string[] }[];
    };
    const [ownLease] = role.rules.flatMap((rule) => rule.resourceNames ?? []);
    const leases = kubeConfig.makeApiClient(CoordinationV1Api);
    const lease = (name: string) => ({
      metadata: { name },
      spec: { holderIdentity: 'me', leaseDurationSeconds: 15 },
    });
    const created = await leases.createNamespacedLease({ namespace, body: lease(ownLease as string) });
    const renew = (name: string, body: object) => leases.replaceNamespacedLease({ name, namespace, body });
    expect(await callStatus(leases.readNamespacedLease({ name: ownLease as string, namespace }))).toBe(200);
    expect(await callStatus(renew(ownLease as string, created))).toBe(200);
    const other = await leases.createNamespacedLease({ namespace, body: lease(uniqueId('other')) });
    expect(await callStatus(renew(other.metadata?.name as string, other))).toBe(403);
    expect(
      await callStatus(leases.createNamespacedLease({ namespace: otherNamespace, body: lease('x') })),
    ).toBe(403);
    expect(await callStatus(leases.deleteNamespacedLease({ name: ownLease as string, namespace }))).toBe(403);
    expect(await callStatus(createGrant(kubeConfig, namespace))).toBe(403);
  });

  it('the decision service account may review tokens, and read nothing', async () => {
    const { kubeConfig } = await session(await renderRbac('decision-service'));
    const review = { spec: { token: 'not-a-token' } };
    const reviewed = await kubeConfig.makeApiClient(AuthenticationV1Api).createTokenReview({ body: review });
    expect(reviewed.status?.authenticated).toBeFalsy();
    expect(await callStatus(kubeConfig.makeApiClient(CoreV1Api).listNamespace())).toBe(403);
    expect(await callStatus(listAll(kubeConfig, POLICY_GRANT_PLURAL))).toBe(403);
  });

  it('takes one permission away and keeps every other one', async () => {
    const rbac = await renderRbac('acl-api');
    const permissions = permissionsOf(rbac);
    const listGrants = permissions.find(
      (p) => p.kind === 'ClusterRole' && p.resource === 'policygrants' && p.verb === 'list',
    );
    expect(listGrants).toBeDefined();
    const reduced = withoutPermission(rbac, listGrants as (typeof permissions)[number]);
    expect(permissionsOf(reduced)).toEqual(permissions.filter((p) => p !== listGrants));
    const { kubeConfig } = await session(reduced);
    expect(await callStatus(listAll(kubeConfig, POLICY_GRANT_PLURAL))).toBe(403);
    expect(await callStatus(listAll(kubeConfig, CATALOG_ITEM_PLURAL))).toBe(200);
    expect(await callStatus(createGrant(kubeConfig, namespace))).toBe(200);
  });

  it('dispose deletes what it created, cluster-scoped roles included', async () => {
    const rbac = await renderRbac('controller');
    const created = await serviceAccountKubeConfig(testKubeConfig(), rbac);
    const clusterRole = rbac.find((object) => object.kind === 'ClusterRole')?.metadata.name as string;
    const rbacApi = testKubeConfig().makeApiClient(RbacAuthorizationV1Api);
    expect(await callStatus(rbacApi.readClusterRole({ name: clusterRole }))).toBe(200);
    await created.dispose();
    expect(await callStatus(rbacApi.readClusterRole({ name: clusterRole }))).toBe(404);
    const core = testKubeConfig().makeApiClient(CoreV1Api);
    expect(await callStatus(core.readNamespacedServiceAccount({ name: created.name, namespace }))).toBe(404);
  });
});
