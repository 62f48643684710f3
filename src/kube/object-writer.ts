import type { KubernetesObject } from '@kubernetes/client-node';
import type { ResourceDescriptor } from '../api/v1alpha1/index.js';
import { MERGE_PATCH, type KubeClient } from './kube-client.js';
import { objectPath, refOf } from './paths.js';

/**
 * What the controller sends to change cached objects. The caches hold compact records (grants, Memberships) or
 * objects stripped of managedFields' field sets and kubectl's last-applied-configuration (`stripForCache`), so a
 * whole cached object must never be sent back: an update would replace what they lack. Both writes still carry
 * the resourceVersion the decision was made on, so a concurrent change fails with 409 instead of being
 * overwritten.
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

export interface ObjectWriterOptions {
  /** The finalizer `setFinalizer` adds or removes. */
  finalizer?: string;
  /** Deadline of one write; default the client's. */
  timeoutMs?: number;
}

/**
 * A controller's status and finalizer writes to one kind (controller-runtime's `Status().Update` and finalizer
 * patch), each conditioned on the resourceVersion the decision was made on: a concurrent change fails with 409
 * and the reconcile runs again on the newer object. The field manager is the client's, so every write names
 * its writer in managedFields.
 */
export class ObjectWriter<T extends KubernetesObject & { status?: unknown }> {
  constructor(
    private readonly kube: KubeClient,
    private readonly resource: ResourceDescriptor,
    private readonly options: ObjectWriterOptions = {},
  ) {}

  /** Replaces the status through the status subresource only. */
  updateStatus(object: T, status: NonNullable<T['status']>, signal?: AbortSignal): Promise<T> {
    return this.kube.call<T>({
      method: 'PUT',
      path: objectPath(this.resource, refOf(object), 'status'),
      body: statusUpdate(object, status),
      ...this.deadline(signal),
    });
  }

  /** Adds the finalizer (present) or removes it, keeping every other one. */
  setFinalizer(object: T, present: boolean, signal?: AbortSignal): Promise<T> {
    const { finalizer } = this.options;
    if (finalizer === undefined) throw new Error(`no finalizer for ${this.resource.plural}`);
    const others = (object.metadata?.finalizers ?? []).filter((name) => name !== finalizer);
    return this.kube.call<T>({
      method: 'PATCH',
      path: objectPath(this.resource, refOf(object)),
      body: finalizersPatch(object, present ? [...others, finalizer] : others),
      contentType: MERGE_PATCH,
      ...this.deadline(signal),
    });
  }

  private deadline(signal: AbortSignal | undefined): { timeoutMs?: number; signal?: AbortSignal } {
    return {
      ...(this.options.timeoutMs === undefined ? {} : { timeoutMs: this.options.timeoutMs }),
      ...(signal ? { signal } : {}),
    };
  }
}
