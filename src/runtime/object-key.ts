import type { KubernetesObject } from '@kubernetes/client-node';
import type { ObjectRef } from '../kube/paths.js';

/** client-go's MetaNamespaceKeyFunc: `namespace/name` for namespaced objects, `name` for cluster-scoped ones. */
export function objectKey(obj: KubernetesObject): string {
  const name = obj.metadata?.name;
  if (!name) {
    throw new Error('object has no metadata.name');
  }
  const namespace = obj.metadata?.namespace;
  return namespace ? `${namespace}/${name}` : name;
}

/** Inverse of objectKey. */
export function parseObjectKey(key: string): ObjectRef {
  const slash = key.indexOf('/');
  return slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
