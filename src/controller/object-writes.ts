import type { KubernetesObject } from '@kubernetes/client-node';

/**
 * What the controller sends to change cached objects. The caches hold compact records (grants, Memberships) or
 * objects stripped of managedFields' field sets and kubectl's last-applied-configuration (`stripForCache`), so a
 * whole cached object must never be sent back: an update would replace what they lack. Both writes still carry the resourceVersion the decision was made on, so
 * a concurrent change fails with 409 instead of being overwritten.
 */

/** A PUT body for the status subresource, which takes the status and nothing else from it. */
export function statusUpdate<T extends KubernetesObject, S>(
  object: T,
  status: S,
): KubernetesObject & { status: S } {
  const { name, namespace, resourceVersion } = object.metadata ?? {};
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    metadata: { name, ...(namespace !== undefined && { namespace }), resourceVersion },
    status,
  };
}

/** A JSON merge patch setting the finalizers (a list is replaced whole), with the resourceVersion as precondition. */
export function finalizersPatch(object: KubernetesObject, finalizers: string[]): KubernetesObject {
  return { metadata: { resourceVersion: object.metadata?.resourceVersion, finalizers } };
}
