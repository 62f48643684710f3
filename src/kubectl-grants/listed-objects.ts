import type { KubernetesObject } from '@kubernetes/client-node';
import type { Agent, CatalogItem, Delegation, Membership, PolicyGrant } from '../api/v1alpha1/index.js';
import { indexerOf } from '../runtime/indexed-cache.js';
import type { Registry } from '../spicedb/registry.js';
import { ClusterLister } from '../verdict/cluster-lister.js';

/** The objects a command reads: what a client listed from the cluster, or manifests parsed from files. */
export interface ListedObjects {
  grants: readonly PolicyGrant[];
  items: readonly CatalogItem[];
  namespaces: readonly KubernetesObject[];
  memberships: readonly Membership[];
  delegations: readonly Delegation[];
  agents: readonly Agent[];
}

export const NO_OBJECTS: ListedObjects = {
  grants: [],
  items: [],
  namespaces: [],
  memberships: [],
  delegations: [],
  agents: [],
};

/**
 * The one view over lists of objects, indexed once: a command reads (or parses) everything once and asks a few
 * questions. Memberships, Delegations and Agents count only in the ACL namespace, as the controller's and the ACL
 * API's do; an object without a name (a Namespace manifest may lack one) is left out.
 */
export function listerOf(objects: ListedObjects, aclNamespace: string, registry: Registry): ClusterLister {
  const named = <T extends KubernetesObject>(list: readonly T[]) =>
    indexerOf(list.filter((obj) => obj.metadata?.name));
  const inAclNamespace = <T extends KubernetesObject>(list: readonly T[]) =>
    named(list.filter((obj) => obj.metadata?.namespace === aclNamespace));
  return new ClusterLister({
    grants: named(objects.grants),
    items: named(objects.items),
    namespaces: named(objects.namespaces),
    memberships: inAclNamespace(objects.memberships),
    delegations: inAclNamespace(objects.delegations),
    agents: inAclNamespace(objects.agents),
    registry,
    aclNamespace,
  });
}
