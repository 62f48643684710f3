import type { KubeConfig } from '@kubernetes/client-node';
import {
  API_GROUP,
  API_VERSION,
  POLICY_GRANT_PLURAL,
  RELATIONSHIPS_FINALIZER,
  type PolicyGrant,
  type PolicyGrantStatus,
} from '../../api/v1alpha1/index.js';
import { MERGE_PATCH, requestJson, type KubeRequest } from '../../runtime/kube-request.js';
import { finalizersPatch, statusUpdate } from '../object-writes.js';
import { CONTROLLER_FIELD_MANAGER } from '../../audit/field-managers.js';

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
 * The controller's writes to PolicyGrants, each carrying the resourceVersion the decision was made on, so a
 * concurrent change fails with 409 (the reconcile is retried on the newer object) instead of being
 * overwritten: the finalizer as a merge patch, the status through the status subresource only (object-writes.ts).
 */
export class GrantWriter {
  constructor(private readonly kubeConfig: KubeConfig) {}

  updateStatus(grant: PolicyGrant, status: PolicyGrantStatus, signal?: AbortSignal): Promise<PolicyGrant> {
    return this.send(
      { method: 'PUT', path: `${grantPath(grant)}/status`, body: statusUpdate(grant, status) },
      signal,
    );
  }

  addFinalizer(grant: PolicyGrant, signal?: AbortSignal): Promise<PolicyGrant> {
    const finalizers = [...(grant.metadata.finalizers ?? []), RELATIONSHIPS_FINALIZER];
    return this.patchFinalizers(grant, finalizers, signal);
  }

  removeFinalizer(grant: PolicyGrant, signal?: AbortSignal): Promise<PolicyGrant> {
    const finalizers = (grant.metadata.finalizers ?? []).filter((name) => name !== RELATIONSHIPS_FINALIZER);
    return this.patchFinalizers(grant, finalizers, signal);
  }

  private patchFinalizers(
    grant: PolicyGrant,
    finalizers: string[],
    signal?: AbortSignal,
  ): Promise<PolicyGrant> {
    const body = finalizersPatch(grant, finalizers);
    return this.send({ method: 'PATCH', path: grantPath(grant), body, contentType: MERGE_PATCH }, signal);
  }

  private send(request: KubeRequest, signal?: AbortSignal): Promise<PolicyGrant> {
    return requestJson<PolicyGrant>(this.kubeConfig, {
      ...request,
      query: { fieldManager: CONTROLLER_FIELD_MANAGER },
      timeoutMs: WRITE_TIMEOUT_MS,
      ...(signal ? { signal } : {}),
    });
  }
}
