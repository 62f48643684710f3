import type { KubernetesObject, V1ManagedFieldsEntry } from '@kubernetes/client-node';

/** kubectl's copy of the whole last applied object: often the largest part of an object's metadata. */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/** Who changed the object, how and when; not which fields (`fieldsV1`, the bulk of managedFields). */
function withoutFieldSet({ fieldsV1: _fields, fieldsType: _type, ...entry }: V1ManagedFieldsEntry) {
  return entry;
}

function withoutLastApplied(annotations: Record<string, string>): Record<string, string> | undefined {
  const { [LAST_APPLIED_ANNOTATION]: _lastApplied, ...rest } = annotations;
  return Object.keys(rest).length > 0 ? rest : undefined;
}

/**
 * A cache transform (Informer's `transform`) that drops what no reader of a cached object uses and what makes up
 * most of its size: each managedFields entry's field set (`fieldsV1`; manager, operation, apiVersion, time and
 * subresource stay, so the field manager of a change can still be told) and kubectl's last-applied-configuration
 * annotation. Spec and status are kept whole. Objects stripped this way must never be written back whole (an
 * update would replace their managedFields and annotations): patch, or send only what is written.
 */
export function stripForCache<T extends KubernetesObject>(obj: T): T {
  const { metadata } = obj;
  if (!metadata) return obj;
  const { managedFields, annotations, ...rest } = metadata;
  const keptAnnotations = annotations && withoutLastApplied(annotations);
  return {
    ...obj,
    metadata: {
      ...rest,
      ...(keptAnnotations && { annotations: keptAnnotations }),
      ...(managedFields && { managedFields: managedFields.map(withoutFieldSet) }),
    },
  };
}
