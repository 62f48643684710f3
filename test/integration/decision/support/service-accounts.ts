import { tokenReviewApi } from '../../../../src/auth/token-review-verifier.js';
import type { TokenReviewApi } from '../../../../src/auth/token-review-verifier.js';
import { objectPath, SERVICE_ACCOUNT_RESOURCE, collectionPath } from '../../../../src/kube/index.js';
import { testKubeClient, testKubeConfig } from '../../support/cluster.js';

/** TokenReview against the shared kube-apiserver, counting the reviews it asks for. */
export function countingTokenReviewApi(): { api: TokenReviewApi; reviews: () => number } {
  const api = tokenReviewApi(testKubeConfig());
  let reviews = 0;
  return {
    api: {
      createTokenReview(param) {
        reviews++;
        return api.createTokenReview(param);
      },
    },
    reviews: () => reviews,
  };
}

/** Creates a ServiceAccount in the shared kube-apiserver. */
export async function createServiceAccount(namespace: string, name: string): Promise<void> {
  await testKubeClient().call({
    method: 'POST',
    path: collectionPath(SERVICE_ACCOUNT_RESOURCE, namespace),
    body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } },
  });
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
  const request = await testKubeClient().call<{ status?: { token?: string } }>({
    method: 'POST',
    path: `${objectPath(SERVICE_ACCOUNT_RESOURCE, { namespace, name })}/token`,
    body: {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { audiences, expirationSeconds: 600 },
    },
  });
  const token = request.status?.token;
  if (!token) throw new Error(`no token for ServiceAccount ${namespace}/${name}`);
  return token;
}
