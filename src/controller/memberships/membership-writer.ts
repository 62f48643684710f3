import type { KubeConfig } from '@kubernetes/client-node';
import {
  API_GROUP,
  API_VERSION,
  MEMBERSHIP_PLURAL,
  type Membership,
  type MembershipStatus,
} from '../../api/v1alpha1/index.js';
import { requestJson } from '../../runtime/kube-request.js';
import { RELATIONSHIPS_FINALIZER } from '../grants/grant-writer.js';

const WRITE_TIMEOUT_MS = 15_000;

export function membershipsPath(namespace: string): string {
  return `/apis/${API_GROUP}/${API_VERSION}/namespaces/${encodeURIComponent(namespace)}/${MEMBERSHIP_PLURAL}`;
}

function membershipPath(membership: Membership): string {
  const { namespace = '', name = '' } = membership.metadata;
  return `${membershipsPath(namespace)}/${encodeURIComponent(name)}`;
}

/**
 * The controller's writes to Memberships: whole-object updates carrying the resourceVersion the decision was
 * made on (a concurrent change fails with 409 and the reconcile runs again on the newer object); status
 * through the status subresource only. The finalizer is the grants' one: the relationships go first.
 */
export class MembershipWriter {
  constructor(private readonly kubeConfig: KubeConfig) {}

  updateStatus(membership: Membership, status: MembershipStatus, signal: AbortSignal): Promise<Membership> {
    return this.put(`${membershipPath(membership)}/status`, { ...membership, status }, signal);
  }

  setFinalizer(membership: Membership, present: boolean, signal: AbortSignal): Promise<Membership> {
    const others = (membership.metadata.finalizers ?? []).filter((name) => name !== RELATIONSHIPS_FINALIZER);
    const finalizers = present ? [...others, RELATIONSHIPS_FINALIZER] : others;
    return this.put(
      membershipPath(membership),
      { ...membership, metadata: { ...membership.metadata, finalizers } },
      signal,
    );
  }

  private put(path: string, body: Membership, signal: AbortSignal): Promise<Membership> {
    return requestJson<Membership>(this.kubeConfig, {
      method: 'PUT',
      path,
      body,
      timeoutMs: WRITE_TIMEOUT_MS,
      signal,
    });
  }
}
