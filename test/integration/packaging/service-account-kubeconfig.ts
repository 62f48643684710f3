import {
  AuthorizationV1Api,
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  type KubernetesObject,
} from '@kubernetes/client-node';
import type { KubeObject } from '../../../hack/sync-packaging.js';
import { POLL_TIMEOUT_MS, until } from '../../../dev/wait/until.js';

// Runs code as a chart ServiceAccount: the component's rendered RBAC (ServiceAccount, Roles, bindings) is created
// in the API server, a token is minted for the account (TokenRequest), and a KubeConfig authenticates with it.
// Permissions can be taken away one at a time, to show that each rule is needed.

const RBAC_KINDS = new Set(['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding']);

/** The RBAC objects of one component (label app.kubernetes.io/component) of rendered chart output. */
export function rbacOf(objects: KubeObject[], component: string): KubeObject[] {
  return objects.filter(
    (object) =>
      RBAC_KINDS.has(object.kind) && object.metadata.labels?.['app.kubernetes.io/component'] === component,
  );
}

interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

/** One verb on one resource (or one named object), granted by one role: the unit a rule can be taken away in. */
export interface Permission {
  kind: 'ClusterRole' | 'Role';
  /** The role's namespace; undefined for a ClusterRole (granted in every namespace). */
  namespace: string | undefined;
  apiGroup: string;
  /** May name a subresource: `policygrants/status`. */
  resource: string;
  /** Set when the rule is limited to named objects. */
  resourceName?: string;
  verb: string;
}

function isRole(object: KubeObject): boolean {
  return object.kind === 'ClusterRole' || object.kind === 'Role';
}

function rulePermissions(role: KubeObject, rule: PolicyRule): Permission[] {
  const names: (string | undefined)[] = rule.resourceNames?.length ? rule.resourceNames : [undefined];
  return rule.apiGroups.flatMap((apiGroup) =>
    rule.resources.flatMap((resource) =>
      names.flatMap((resourceName) =>
        rule.verbs.map((verb) => ({
          kind: role.kind as Permission['kind'],
          namespace: role.kind === 'Role' ? role.metadata.namespace : undefined,
          apiGroup,
          resource,
          ...(resourceName === undefined ? {} : { resourceName }),
          verb,
        })),
      ),
    ),
  );
}

function permissionsOfRole(role: KubeObject): Permission[] {
  return ((role.rules ?? []) as PolicyRule[]).flatMap((rule) => rulePermissions(role, rule));
}

export function permissionsOf(rbac: KubeObject[]): Permission[] {
  return rbac.filter(isRole).flatMap(permissionsOfRole);
}

const samePermission = (a: Permission, b: Permission) => JSON.stringify(a) === JSON.stringify(b);

/** The RBAC with one permission taken away: its role is rewritten as one rule per remaining permission. */
export function withoutPermission(rbac: KubeObject[], permission: Permission): KubeObject[] {
  return rbac.map((object) => {
    const permissions = isRole(object) ? permissionsOfRole(object) : [];
    if (!permissions.some((granted) => samePermission(granted, permission))) return object;
    const rules = permissions
      .filter((granted) => !samePermission(granted, permission))
      .map((granted) => ({
        apiGroups: [granted.apiGroup],
        resources: [granted.resource],
        ...(granted.resourceName === undefined ? {} : { resourceNames: [granted.resourceName] }),
        verbs: [granted.verb],
      }));
    return { ...object, rules };
  });
}

export interface ServiceAccountSession {
  namespace: string;
  name: string;
  /** Authenticates as the ServiceAccount (bearer token), against the admin's server with the admin's CA. */
  kubeConfig: KubeConfig;
  /** Deletes every object the session created, cluster-scoped ones included. */
  dispose(): Promise<void>;
}

export interface ServiceAccountOptions {
  /** Lifetime of the minted token (default one hour; the API server's minimum is 10 minutes). */
  expirationSeconds?: number;
  /** How long to wait until the API server's authorizer sees every granted permission (default: the poll timeout). */
  propagationTimeoutMs?: number;
}

/**
 * Creates `rbac` (one ServiceAccount plus its Roles and bindings, as rendered by the chart) with `admin`, and
 * answers a KubeConfig that acts as that ServiceAccount once the API server enforces every granted permission.
 */
export async function serviceAccountKubeConfig(
  admin: KubeConfig,
  rbac: KubeObject[],
  options: ServiceAccountOptions = {},
): Promise<ServiceAccountSession> {
  const accounts = rbac.filter((object) => object.kind === 'ServiceAccount');
  if (accounts.length !== 1)
    throw new Error(`expected one ServiceAccount in the RBAC, got ${accounts.length}`);
  const { name, namespace = 'default' } = (accounts[0] as KubeObject).metadata;
  const objects = admin.makeApiClient(KubernetesObjectApi);
  const created: KubernetesObject[] = [];
  const dispose = async () => {
    for (const object of created.reverse()) await objects.delete(object).catch(ignoreNotFound);
  };
  try {
    for (const object of rbac) created.push(await objects.create(object as KubernetesObject));
    const token = await mintToken(admin, namespace, name, options.expirationSeconds ?? 3_600);
    const kubeConfig = tokenKubeConfig(admin, namespace, name, token);
    await waitUntilAuthorized(
      kubeConfig,
      permissionsOf(rbac),
      options.propagationTimeoutMs ?? POLL_TIMEOUT_MS,
    );
    return {
      namespace,
      name,
      kubeConfig,
      dispose,
    };
  } catch (error) {
    await dispose();
    throw error;
  }
}

async function mintToken(admin: KubeConfig, namespace: string, name: string, expirationSeconds: number) {
  const request = await admin.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
    name,
    namespace,
    body: {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { audiences: [], expirationSeconds },
    },
  });
  const token = request.status?.token;
  if (!token) throw new Error(`TokenRequest for ${namespace}/${name} returned no token`);
  return token;
}

function tokenKubeConfig(admin: KubeConfig, namespace: string, name: string, token: string): KubeConfig {
  const cluster = admin.getCurrentCluster();
  if (!cluster) throw new Error('the admin kubeconfig has no current cluster');
  const user = `system:serviceaccount:${namespace}:${name}`;
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [
      {
        name: cluster.name,
        server: cluster.server,
        caData: cluster.caData,
        caFile: cluster.caFile,
        skipTLSVerify: false,
      },
    ],
    users: [{ name: user, token }],
    contexts: [{ name: user, cluster: cluster.name, user, namespace }],
    currentContext: user,
  });
  return kubeConfig;
}

/** Whether the API server lets `kubeConfig`'s user exercise `permission` (SelfSubjectAccessReview). */
export async function isAllowed(kubeConfig: KubeConfig, permission: Permission): Promise<boolean> {
  const [resource, subresource] = permission.resource.split('/');
  const review = await kubeConfig.makeApiClient(AuthorizationV1Api).createSelfSubjectAccessReview({
    body: {
      spec: {
        resourceAttributes: {
          group: permission.apiGroup,
          resource,
          subresource,
          verb: permission.verb,
          namespace: permission.namespace,
          name: permission.resourceName,
        },
      },
    },
  });
  return review.status?.allowed === true;
}

/** RBAC changes reach the authorizer through its informers: wait until the account is allowed all it was granted. */
async function waitUntilAuthorized(kubeConfig: KubeConfig, permissions: Permission[], timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (const permission of permissions) {
    const what = `authorization of ${JSON.stringify(permission)}`;
    await until(() => isAllowed(kubeConfig, permission), what, Math.max(0, deadline - Date.now()));
  }
}

/** The HTTP status a call was answered with: 200 when it succeeded, the API server's code when it failed. */
export async function callStatus(call: Promise<unknown>): Promise<number> {
  try {
    await call;
    return 200;
  } catch (error) {
    return (error as { code?: number }).code ?? 0;
  }
}

function ignoreNotFound(error: unknown): void {
  if ((error as { code?: number }).code !== 404) throw error;
}
