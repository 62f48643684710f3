import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { KubeObject } from './packaging-support.js';
import { callStatus, isAllowed, type Permission } from './service-account-kubeconfig.js';

// What the ACL API (it faces the internet) must not reach in the release namespace: the ConfigMaps the other
// services load (settings, JWKS), Secrets, and SpiceDB's key. The RBAC proof asks the API server as the
// ServiceAccount, and reads the rendered Deployment.

export const EVERY_VERB = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'];

/** The verbs among EVERY_VERB that the account is allowed on `resource` in `namespace` (SelfSubjectAccessReview). */
export async function allowedVerbs(
  kubeConfig: KubeConfig,
  namespace: string,
  apiGroup: string,
  resource: string,
): Promise<string[]> {
  const permission = (verb: string): Permission => ({ kind: 'Role', namespace, apiGroup, resource, verb });
  const allowed = await Promise.all(EVERY_VERB.map((verb) => isAllowed(kubeConfig, permission(verb))));
  return EVERY_VERB.filter((_verb, index) => allowed[index]);
}

/** The status of each real call the account makes on the ConfigMap `name` (which exists) and on a new one. */
export async function configMapCallStatuses(
  kubeConfig: KubeConfig,
  namespace: string,
  name: string,
): Promise<Record<string, number>> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const body = { metadata: { name }, data: { JWKS_URL: 'https://attacker.example/jwks.json' } };
  const calls: Record<string, () => Promise<unknown>> = {
    get: () => core.readNamespacedConfigMap({ name, namespace }),
    list: () => core.listNamespacedConfigMap({ namespace }),
    create: () =>
      core.createNamespacedConfigMap({ namespace, body: { ...body, metadata: { name: `${name}-2` } } }),
    update: () => core.replaceNamespacedConfigMap({ name, namespace, body }),
    delete: () => core.deleteNamespacedConfigMap({ name, namespace }),
  };
  const statuses = await Promise.all(Object.values(calls).map((call) => callStatus(call())));
  return Object.fromEntries(Object.keys(calls).map((verb, index) => [verb, statuses[index] as number]));
}

interface Container {
  env?: { name: string; valueFrom?: { secretKeyRef?: { name: string } } }[];
  envFrom?: { secretRef?: { name: string } }[];
}

interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  volumes?: { secret?: { secretName: string }; projected?: { sources: { secret?: { name: string } }[] } }[];
}

/** The component's Deployment's environment variable names, and every Secret its pod reads (env or volume). */
export function secretsOfDeployment(
  objects: KubeObject[],
  component: string,
): { variables: string[]; secrets: string[] } {
  const deployment = objects.find(
    (object) =>
      object.kind === 'Deployment' && object.metadata.labels?.['app.kubernetes.io/component'] === component,
  );
  if (!deployment) throw new Error(`no Deployment for ${component}`);
  const pod = (deployment.spec as { template: { spec: PodSpec } }).template.spec;
  const containers = [...pod.containers, ...(pod.initContainers ?? [])];
  const secrets = [
    ...containers.flatMap((container) => [
      ...(container.env ?? []).flatMap((variable) => variable.valueFrom?.secretKeyRef?.name ?? []),
      ...(container.envFrom ?? []).flatMap((source) => source.secretRef?.name ?? []),
    ]),
    ...(pod.volumes ?? []).flatMap((volume) => [
      ...(volume.secret ? [volume.secret.secretName] : []),
      ...(volume.projected?.sources ?? []).flatMap((source) => source.secret?.name ?? []),
    ]),
  ];
  const variables = containers.flatMap((container) => (container.env ?? []).map((variable) => variable.name));
  return { variables, secrets: [...new Set(secrets)].sort() };
}
