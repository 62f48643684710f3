import type { V1ManagedFieldsEntry, V1ObjectMeta } from '@kubernetes/client-node';
import { TRACEPARENT_ANNOTATION } from '../observability/tracing.js';
import type { InternPool } from '../runtime/index.js';

/** Who made a change and when: what the grant audit reads of a managedFields entry. */
export type CachedFieldManager = Pick<V1ManagedFieldsEntry, 'manager' | 'operation' | 'time'>;

/**
 * What the controller's caches keep of an object's metadata: what its readers use (keys, the resourceVersion
 * writes are conditional on, generation, finalizers, creation and deletion, and for grants who changed them
 * last). Labels and annotations go: the label selector is applied by the API server, and nothing in the
 * controller reads either of a cached grant or membership, but for the traceparent annotation, to which a
 * reconcile's span links (present only on objects written by a traced ACL API).
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
  | 'annotations'
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
    annotations: withTraceparentOf(metadata, undefined),
  };
}

/** `kept` (annotations a cache keeps), with the traceparent annotation of `metadata` when it has one. */
export function withTraceparentOf(
  metadata: V1ObjectMeta,
  kept: Record<string, string> | undefined,
): Record<string, string> | undefined {
  const traceparent = metadata.annotations?.[TRACEPARENT_ANNOTATION];
  return traceparent === undefined ? kept : { ...kept, [TRACEPARENT_ANNOTATION]: traceparent };
}
