import type { V1ManagedFieldsEntry, V1ObjectMeta } from '@kubernetes/client-node';
import type { InternPool } from '../runtime/index.js';

/** Who made a change and when: what the grant audit reads of a managedFields entry. */
export type CachedFieldManager = Pick<V1ManagedFieldsEntry, 'manager' | 'operation' | 'time'>;

/**
 * What the controller's caches keep of an object's metadata: what its readers use (keys, the resourceVersion
 * writes are conditional on, generation, finalizers, creation and deletion, and for grants who changed them
 * last). Labels and annotations go: the label selector is applied by the API server, and nothing in the
 * controller reads either of a cached grant or membership.
 */
export interface CachedMetadata extends Pick<
  V1ObjectMeta,
  | 'name'
  | 'namespace'
  | 'uid'
  | 'resourceVersion'
  | 'generation'
  | 'creationTimestamp'
  | 'deletionTimestamp'
  | 'finalizers'
> {
  managedFields?: CachedFieldManager[];
}

/** Timestamps arrive as strings (plain JSON), whatever client-node's types say. */
export function internTime(pool: InternPool, time: Date | undefined): Date | undefined {
  return typeof time === 'string' ? (pool.intern(time) as unknown as Date) : time;
}

/**
 * Every cached object gets the same keys, absent ones undefined: one shape, no per-object property list.
 * Repeated values (namespace, timestamps, finalizer lists) are shared through `pool`.
 */
export function cachedMetadata(
  metadata: V1ObjectMeta,
  pool: InternPool,
  managedFields?: CachedFieldManager[],
): CachedMetadata {
  return {
    name: metadata.name,
    namespace: pool.intern(metadata.namespace),
    uid: metadata.uid,
    resourceVersion: metadata.resourceVersion,
    generation: metadata.generation,
    creationTimestamp: internTime(pool, metadata.creationTimestamp),
    deletionTimestamp: internTime(pool, metadata.deletionTimestamp),
    finalizers: pool.share(metadata.finalizers),
    managedFields,
  };
}
