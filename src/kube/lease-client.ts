import { isNotFound } from './api-error.js';
import { LEASE_RESOURCE } from './core-resources.js';
import type { KubeClient } from './kube-client.js';
import { collectionPath, objectPath } from './paths.js';

/** coordination.k8s.io/v1 LeaseSpec as JSON (times are RFC 3339 strings with microseconds). */
export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

export interface Lease {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec?: LeaseSpec;
}

/** The calls leader election makes on its one Lease; a fake in unit tests. */
export interface LeaseClient {
  /** `undefined` when the Lease does not exist. */
  get(signal?: AbortSignal): Promise<Lease | undefined>;
  /** Rejects with a 409 KubeApiError when someone else created it first. */
  create(spec: LeaseSpec, signal?: AbortSignal): Promise<Lease>;
  /** Optimistic: rejects with a 409 KubeApiError when `lease.metadata.resourceVersion` is not current. */
  update(lease: Lease, signal?: AbortSignal): Promise<Lease>;
}

/** metav1.MicroTime's wire format: RFC 3339 with exactly six fractional digits. */
export function microTime(date: Date): string {
  return date.toISOString().replace(/Z$/, '000Z');
}

export function kubeLeaseClient(kube: KubeClient, namespace: string, name: string): LeaseClient {
  const collection = collectionPath(LEASE_RESOURCE, namespace);
  const item = objectPath(LEASE_RESOURCE, { namespace, name });
  return {
    async get(signal) {
      try {
        return await kube.call<Lease>({ method: 'GET', path: item, signal });
      } catch (err) {
        if (isNotFound(err)) {
          return undefined;
        }
        throw err;
      }
    },
    create(spec, signal) {
      const body: Lease = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name, namespace },
        spec,
      };
      return kube.call<Lease>({ method: 'POST', path: collection, body, signal });
    },
    update(lease, signal) {
      return kube.call<Lease>({ method: 'PUT', path: item, body: lease, signal });
    },
  };
}
