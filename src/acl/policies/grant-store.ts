import {
  GROUP_VERSION,
  POLICY_GRANT_KIND,
  RELATIONSHIPS_FINALIZER,
  type PolicyGrant,
  type PolicyGrantSpec,
} from '../../api/v1alpha1/index.js';
import { claimObject, type ClaimData, type StoredClaim } from './grant-claims.js';
import type { KubeClient } from '../../kube/kube-client.js';
import { isNotFound, isPreconditionConflict } from '../../kube/api-error.js';
import { withTraceparent } from '../../observability/tracing.js';
import { paths } from '../resources.js';

export interface NewGrant {
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  spec: PolicyGrantSpec;
}

/**
 * The ACL API's writes and point reads against the apiserver: grants and claims in its namespace.
 * Errors are the KubeClient's (KubeApiError, KubernetesUnreachableError); reads answer undefined for 404.
 */
export class GrantStore {
  constructor(
    private readonly kube: KubeClient,
    readonly namespace: string,
  ) {}

  createClaim(name: string, data: ClaimData): Promise<StoredClaim> {
    return this.kube.call({
      method: 'POST',
      path: paths.grantClaims(this.namespace),
      body: claimObject(name, data),
    });
  }

  getClaim(name: string): Promise<StoredClaim | undefined> {
    return orUndefined(this.kube.call({ method: 'GET', path: paths.grantClaim(this.namespace, name) }));
  }

  /** Rewrites a claim if nobody changed it since `resourceVersion` (else a 409). */
  replaceClaim(name: string, data: ClaimData, resourceVersion: string): Promise<StoredClaim> {
    return this.kube.call({
      method: 'PUT',
      path: paths.grantClaim(this.namespace, name),
      body: claimObject(name, data, resourceVersion),
    });
  }

  /** Deletes a claim if nobody changed it since `resourceVersion` (else a 409). */
  async deleteClaim(name: string, resourceVersion: string): Promise<void> {
    await this.kube.call({
      method: 'DELETE',
      path: paths.grantClaim(this.namespace, name),
      body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { resourceVersion } },
    });
  }

  /**
   * Creates the grant with the controller's finalizer already set, which saves the controller a write per
   * grant (docs/controller-design.md, "Finalizer from birth"). Traced, it carries the request's traceparent, to
   * which the controller's reconciles of the grant link.
   */
  createGrant(grant: NewGrant): Promise<PolicyGrant> {
    const { name, labels, annotations } = grant;
    return this.kube.call({
      method: 'POST',
      path: paths.policyGrants(this.namespace),
      body: {
        apiVersion: GROUP_VERSION,
        kind: POLICY_GRANT_KIND,
        metadata: {
          name,
          labels,
          annotations: withTraceparent(annotations),
          finalizers: [RELATIONSHIPS_FINALIZER],
        },
        spec: grant.spec,
      },
    });
  }

  getGrant(name: string, namespace = this.namespace): Promise<PolicyGrant | undefined> {
    return orUndefined(this.kube.call({ method: 'GET', path: paths.policyGrant(namespace, name) }));
  }

  /**
   * Deletes a grant this API has just created (a rollback), only if it is still the object with `uid` (never a
   * successor). The finalizer it was born with would keep it Terminating until a controller releases it (for
   * ever where none runs), so it is released here when the controller has written no status yet, conditioned
   * on the resourceVersion of the deletion; otherwise the controller withdraws the tuples and releases it.
   */
  async deleteGrant(name: string, uid: string): Promise<void> {
    const path = paths.policyGrant(this.namespace, name);
    const deleted = await this.kube.call<PolicyGrant>({
      method: 'DELETE',
      path,
      body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid } },
    });
    if (!deleted.metadata?.deletionTimestamp || deleted.status) return;
    const finalizers = (deleted.metadata.finalizers ?? []).filter((each) => each !== RELATIONSHIPS_FINALIZER);
    const { resourceVersion } = deleted.metadata;
    await this.kube
      .call({ method: 'PATCH', path, body: { metadata: { resourceVersion, finalizers } } })
      .catch((error: unknown) => {
        if (!isNotFound(error) && !isPreconditionConflict(error)) throw error;
      });
  }

  /** Soft delete: a merge patch of revokedAt and revokedBy, conditioned on the grant's resourceVersion. */
  revokeGrant(grant: PolicyGrant, revokedAt: string, revokedBy: string): Promise<PolicyGrant> {
    const { namespace = '', name = '', resourceVersion } = grant.metadata;
    return this.kube.call({
      method: 'PATCH',
      path: paths.policyGrant(namespace, name),
      body: { metadata: { resourceVersion }, spec: { revokedAt, revokedBy } },
    });
  }

  /** Cheap reachability probe: the API group's discovery document (answers once the CRDs are served). */
  async ping(timeoutMs: number): Promise<void> {
    await this.kube.call({ method: 'GET', path: paths.apiGroup, timeoutMs });
  }
}

async function orUndefined<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await read;
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}
