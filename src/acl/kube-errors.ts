import { HttpError, dependencyUnavailable } from '../http/errors.js';
import { KubeApiError, KubernetesUnreachableError } from '../kube/api-error.js';

export const KUBERNETES_DEPENDENCY = 'kubernetes';

/**
 * What a client sees of a Kubernetes failure that the code did not handle itself: the apiserver rejecting
 * an object (422/400) is a 400 with its message, which names the field; everything else (no answer, 5xx,
 * 429, the service account refused, an unexpected 404/409) means the store of record is not usable for
 * this request: a 503 naming kubernetes. Errors of other origins pass unchanged.
 */
export function kubernetesFailure(error: unknown): unknown {
  if (error instanceof KubeApiError && (error.statusCode === 422 || error.statusCode === 400)) {
    return new HttpError('BadRequest', `kubernetes rejected the object: ${error.message}`, { cause: error });
  }
  if (error instanceof KubeApiError || error instanceof KubernetesUnreachableError) {
    return dependencyUnavailable(KUBERNETES_DEPENDENCY, error);
  }
  return error;
}
