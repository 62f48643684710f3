import type { KubernetesObject } from '@kubernetes/client-node';
import {
  ACCESS_REQUEST_RESOURCE,
  AGENT_RESOURCE,
  CATALOG_ITEM_RESOURCE,
  DELEGATION_RESOURCE,
  MEMBERSHIP_RESOURCE,
  POLICY_GRANT_RESOURCE,
  type AccessRequest,
  type Agent,
  type CatalogItem,
  type Delegation,
  type Membership,
  type PolicyGrant,
} from '../api/v1alpha1/index.js';
import { collectionPath, NAMESPACE_RESOURCE } from '../kube/index.js';
import { InternPool, type Informer, type Manager } from '../runtime/index.js';
import type { Registry } from '../spicedb/registry.js';
import { ORGANISATION_LABEL } from '../verdict/namespace-authorisation.js';
import { ClusterView } from './cluster-view.js';
import type { ControllerConfig } from './controller-config.js';
import { delegationKind } from './delegations/delegation-projection.js';
import { grantCacheTransform } from './grants/cached-grant.js';
import { membershipCacheTransform } from './memberships/cached-membership.js';
import { membershipKind } from './memberships/membership-projection.js';
import { ProjectedView } from './projected/projected-view.js';

/** Index of Agents and Delegations by the agent id they name. */
export const BY_AGENT_ID = 'agentId';

/**
 * The informers the controllers watch and the indexed views over them that reconcilers, the resync and the
 * metrics share. Built once, before any setup: an informer takes the transform of its first use.
 */
export interface ControllerCaches {
  grants: Informer<PolicyGrant>;
  items: Informer<CatalogItem>;
  namespaces: Informer<KubernetesObject>;
  cluster: ClusterView;
  membershipCache: Informer<Membership>;
  memberships: ProjectedView<Membership>;
  delegationCache: Informer<Delegation>;
  agentCache: Informer<Agent>;
  delegations: ProjectedView<Delegation>;
  accessRequests: Informer<AccessRequest>;
}

export function buildControllerCaches(
  manager: Manager,
  config: ControllerConfig,
  registry: Registry,
): ControllerCaches {
  const selector = config.labelSelector === undefined ? {} : { labelSelector: config.labelSelector };
  // Grants and Memberships, the kinds counted by the hundred thousand, are cached as compact records.
  const pool = new InternPool();
  const grants = manager.informer<PolicyGrant>({
    path: collectionPath(POLICY_GRANT_RESOURCE),
    ...selector,
    transform: grantCacheTransform(pool),
  });
  const items = manager.informer<CatalogItem>({
    path: collectionPath(CATALOG_ITEM_RESOURCE),
    ...selector,
  });
  const namespaces = manager.informer<KubernetesObject>({
    path: collectionPath(NAMESPACE_RESOURCE),
    labelSelector: ORGANISATION_LABEL,
  });
  // Only the Memberships of the ACL namespace count; the label selector narrows grants and items only.
  const membershipCache = manager.informer<Membership>({
    path: collectionPath(MEMBERSHIP_RESOURCE, config.aclNamespace),
    transform: membershipCacheTransform(pool),
  });
  // Delegations count only in the ACL namespace too, and only for the owner their Agent object names.
  const delegationCache = manager.informer<Delegation>({
    path: collectionPath(DELEGATION_RESOURCE, config.aclNamespace),
  });
  const agentCache = manager.informer<Agent>({ path: collectionPath(AGENT_RESOURCE, config.aclNamespace) });
  agentCache.addIndex(BY_AGENT_ID, (agent) => [agent.spec.agentId]);
  delegationCache.addIndex(BY_AGENT_ID, (delegation) => [delegation.spec.agentId]);
  const ownerOf = (agentId: string) => agentCache.byIndex(BY_AGENT_ID, agentId)[0]?.spec.ownerId;
  return {
    grants,
    items,
    namespaces,
    cluster: new ClusterView({ grants, items, namespaces, registry, aclNamespace: config.aclNamespace }),
    membershipCache,
    memberships: new ProjectedView(membershipCache, membershipKind),
    delegationCache,
    agentCache,
    delegations: new ProjectedView(delegationCache, delegationKind({ registry, ownerOf })),
    accessRequests: manager.informer<AccessRequest>({
      path: collectionPath(ACCESS_REQUEST_RESOURCE, config.aclNamespace),
    }),
  };
}
