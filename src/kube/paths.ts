import type { KubernetesObject } from '@kubernetes/client-node';
import type { ResourceDescriptor } from '../api/v1alpha1/index.js';

// The one place request paths are built: every segment goes through encodeURIComponent, so a name or
// namespace can never reach another path than its own.

/** A namespace and a name; cluster-scoped kinds ignore the namespace. */
export interface ObjectRef {
  namespace?: string | undefined;
  name: string;
}

const segment = encodeURIComponent;

/** `/api/v1` for the core group, `/apis/<group>/<version>` for the others: the group's discovery document. */
export function groupVersionPath({ group, version }: Pick<ResourceDescriptor, 'group' | 'version'>): string {
  return group === '' ? `/api/${segment(version)}` : `/apis/${segment(group)}/${segment(version)}`;
}

/** The collection in `namespace`, or across all namespaces when it is undefined (or the kind is cluster-scoped). */
export function collectionPath(resource: ResourceDescriptor, namespace?: string): string {
  const scope = resource.namespaced && namespace !== undefined ? `/namespaces/${segment(namespace)}` : '';
  return `${groupVersionPath(resource)}${scope}/${segment(resource.plural)}`;
}

/** One object, or its `status` subresource. */
export function objectPath(resource: ResourceDescriptor, ref: ObjectRef, subresource?: 'status'): string {
  const item = `${collectionPath(resource, ref.namespace ?? '')}/${segment(ref.name)}`;
  return subresource === undefined ? item : `${item}/${subresource}`;
}

/** The ref of a Kubernetes object as its metadata names it. */
export function refOf(object: KubernetesObject): ObjectRef {
  return { namespace: object.metadata?.namespace, name: object.metadata?.name ?? '' };
}
