import type { KubeConfig } from '@kubernetes/client-node';
import {
  API_GROUP,
  API_VERSION,
  POLICY_GRANT_PLURAL,
  type PolicyGrant,
  type PolicyGrantStatus,
} from '../../api/v1alpha1/index.js';
import { requestJson } from '../../runtime/kube-request.js';

/** Added before the first SpiceDB write for a grant; removed once its tuples are gone. */
export const RELATIONSHIPS_FINALIZER = 'acl.policygrant.dev/relationships';

const WRITE_TIMEOUT_MS = 15_000;

export function policyGrantsPath(namespace?: string): string {
  const scope = namespace === undefined ? '' : `/namespaces/${encodeURIComponent(namespace)}`;
  return `/apis/${API_GROUP}/${API_VERSION}${scope}/${POLICY_GRANT_PLURAL}`;
}

function grantPath(grant: PolicyGrant): string {
  return `${policyGrantsPath(grant.metadata.namespace ?? '')}/${encodeURIComponent(grant.metadata.name ?? '')}`;
}

/** Whether the object (a grant or a Membership) holds the controller's finalizer. */
export function hasFinalizer(object: Pick<PolicyGrant, 'metadata'>): boolean {
  return (object.metadata.finalizers ?? []).includes(RELATIONSHIPS_FINALIZER);
}

/**
 * The controller's writes to PolicyGrants: whole-object updates carrying the resourceVersion the decision was
 * made on, so a concurrent change fails with 409 (the reconcile is retried on the newer object) instead of
 * being overwritten. Status goes through the status subresource only.
 */
export class GrantWriter {
  constructor(private readonly kubeConfig: KubeConfig) {}

  updateStatus(grant: PolicyGrant, status: PolicyGrantStatus, signal?: AbortSignal): Promise<PolicyGrant> {
    return this.put(`${grantPath(grant)}/status`, { ...grant, status }, signal);
  }

  addFinalizer(grant: PolicyGrant, signal?: AbortSignal): Promise<PolicyGrant> {
    const finalizers = [...(grant.metadata.finalizers ?? []), RELATIONSHIPS_FINALIZER];
    return this.put(grantPath(grant), { ...grant, metadata: { ...grant.metadata, finalizers } }, signal);
  }

  removeFinalizer(grant: PolicyGrant, signal?: AbortSignal): Promise<PolicyGrant> {
    const finalizers = (grant.metadata.finalizers ?? []).filter((name) => name !== RELATIONSHIPS_FINALIZER);
    return this.put(grantPath(grant), { ...grant, metadata: { ...grant.metadata, finalizers } }, signal);
  }

  private put(path: string, body: PolicyGrant, signal?: AbortSignal): Promise<PolicyGrant> {
    return requestJson<PolicyGrant>(this.kubeConfig, {
      method: 'PUT',
      path,
      body,
      timeoutMs: WRITE_TIMEOUT_MS,
      ...(signal ? { signal } : {}),
    });
  }
}
