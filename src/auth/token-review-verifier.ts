import type { KubeConfig, V1TokenReview } from '@kubernetes/client-node';
import { collectionPath, KubeClient, TOKEN_REVIEW_RESOURCE } from '../kube/index.js';
import { AuthenticationError } from './authentication-error.js';
import { VerifierUnavailableError } from './verifier-unavailable.js';
import type { Principal } from './principal.js';
import type { BearerVerifier } from './verifiers.js';

/** What the verifier needs of the Kubernetes API: TokenReview's create. */
export interface TokenReviewApi {
  createTokenReview(param: { body: V1TokenReview }): Promise<V1TokenReview>;
}

export interface TokenReviewVerifierOptions {
  api: TokenReviewApi;
  /**
   * Audiences the token must be issued for (a projected token's `audience`), at least one: without, the API
   * server would review for its own audiences and accept the token a workload holds for the API server.
   */
  audiences: readonly string[];
  /** Deadline of one TokenReview. */
  timeoutMs?: number;
}

export const DEFAULT_TOKEN_REVIEW_TIMEOUT_MS = 2_000;
/** The dependency a 503 names when TokenReview cannot be done. */
export const KUBERNETES_DEPENDENCY = 'kubernetes';
const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';

/** TokenReview through the project's transport; the verifier sets the deadline. */
export function tokenReviewApi(kubeConfig: KubeConfig): TokenReviewApi {
  const kube = new KubeClient(kubeConfig);
  return {
    createTokenReview: ({ body }) =>
      kube.call<V1TokenReview>({ method: 'POST', path: collectionPath(TOKEN_REVIEW_RESOURCE), body }),
  };
}

/**
 * Verifies Kubernetes ServiceAccount tokens by asking the API server (TokenReview). Only ServiceAccounts are
 * accepted: a node's or a person's cluster credential is not a workload identity. The principal is an
 * application whose id is the ServiceAccount's username, `system:serviceaccount:<namespace>:<name>`.
 * One call per verification: put a cache in front (the decision service does).
 */
export function createTokenReviewVerifier(options: TokenReviewVerifierOptions): BearerVerifier {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TOKEN_REVIEW_TIMEOUT_MS;
  if (options.audiences.length === 0) throw new Error('TokenReview needs at least one audience');
  const audiences = [...options.audiences];
  return {
    async verify(token) {
      const review = await withDeadline(
        options.api.createTokenReview({
          body: {
            apiVersion: 'authentication.k8s.io/v1',
            kind: 'TokenReview',
            spec: { token, audiences },
          },
        }),
        timeoutMs,
      ).catch((error: unknown) => {
        throw new VerifierUnavailableError(KUBERNETES_DEPENDENCY, { cause: error });
      });
      return serviceAccountPrincipal(review, audiences);
    },
  };
}

function serviceAccountPrincipal(review: V1TokenReview, audiences: readonly string[]): Principal {
  const status = review.status;
  const username = status?.user?.username ?? '';
  const rejected = (why: string) => new AuthenticationError('invalid token', { cause: new Error(why) });
  if (status?.authenticated !== true) throw rejected(`TokenReview: ${status?.error ?? 'not authenticated'}`);
  if (!username.startsWith(SERVICE_ACCOUNT_PREFIX)) throw rejected('TokenReview: not a ServiceAccount');
  // The API server answers only for an audience the token has; checked again so a proxy cannot widen it.
  if (!audiences.some((audience) => status.audiences?.includes(audience))) {
    throw rejected('TokenReview: token is not for this audience');
  }
  const serviceAccount = username.slice(SERVICE_ACCOUNT_PREFIX.length);
  return { kind: 'application', id: username, clientId: username, roles: new Set(), serviceAccount };
}

function withDeadline<T>(promise: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`TokenReview timed out after ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
