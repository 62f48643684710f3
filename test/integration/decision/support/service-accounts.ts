import { CoreV1Api } from '@kubernetes/client-node';
import { testKubeConfig } from '../../support/cluster.js';

/** Creates a ServiceAccount in the shared kube-apiserver. */
export async function createServiceAccount(namespace: string, name: string): Promise<void> {
  const core = testKubeConfig().makeApiClient(CoreV1Api);
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
}

/**
 * A real token of the ServiceAccount from the TokenRequest API, for `audiences`; with none, the API server
 * fills in its own audiences, as for the token a pod mounts by default.
 */
export async function serviceAccountToken(
  namespace: string,
  name: string,
  audiences: string[] = [],
): Promise<string> {
  const core = testKubeConfig().makeApiClient(CoreV1Api);
  const request = await core.createNamespacedServiceAccountToken({
    name,
    namespace,
    body: { spec: { audiences, expirationSeconds: 600 } },
  });
  const token = request.status?.token;
  if (!token) throw new Error(`no token for ServiceAccount ${namespace}/${name}`);
  return token;
}
