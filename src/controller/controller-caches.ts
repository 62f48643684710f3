import type { KubernetesObject } from '@kubernetes/client-node';
import {
  API_GROUP,
  API_VERSION,
  CATALOG_ITEM_PLURAL,
  MEMBERSHIP_PLURAL,
  type AccessRequest,
  type Agent,
  type CatalogItem,
  type Delegation,
  type Membership,
  type PolicyGrant,
} from '../api/v1alpha1/index.js';
import { InternPool, type Informer, type Manager } from '../runtime/index.js';
import type { Registry } from '../spicedb/registry.js';
import { ORGANISATION_LABEL } from '../verdict/namespace-authorisation.js';
import { accessRequestsPath } from './access-requests/access-request-reconciler.js';
import { ClusterWorld } from './cluster-world.js';
import type { ControllerConfig } from './config.js';
import { delegationKind } from './delegations/delegation-projection.js';
import { agentsPath, delegationsPath } from './delegations/delegation-writer.js';
import { grantCacheTransform } from './grants/cached-grant.js';
import { policyGrantsPath } from './grants/grant-writer.js';
import { membershipCacheTransform } from './memberships/cached-membership.js';
import { membershipKind } from './memberships/membership-projection.js';
import { ProjectedWorld } from './projected/projected-world.js';

export function membershipsPath(namespace: string): string {
  return `/apis/${API_GROUP}/${API_VERSION}/namespaces/${encodeURIComponent(namespace)}/${MEMBERSHIP_PLURAL}`;
}

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
  world: ClusterWorld;
  membershipCache: Informer<Membership>;
  memberships: ProjectedWorld<Membership>;
  delegationCache: Informer<Delegation>;
  agentCache: Informer<Agent>;
  delegations: ProjectedWorld<Delegation>;
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
    path: policyGrantsPath(),
    ...selector,
    transform: grantCacheTransform(pool),
  });
  const items = manager.informer<CatalogItem>({
    path: `/apis/${API_GROUP}/${API_VERSION}/${CATALOG_ITEM_PLURAL}`,
    ...selector,
  });
  const namespaces = manager.informer<KubernetesObject>({
    path: '/api/v1/namespaces',
    labelSelector: ORGANISATION_LABEL,
  });
  // Only the Memberships of the ACL namespace count; the label selector narrows grants and items only.
  const membershipCache = manager.informer<Membership>({
    path: membershipsPath(config.aclNamespace),
    transform: membershipCacheTransform(pool),
  });
  // Delegations count only in the ACL namespace too, and only for the owner their Agent object names.
  const delegationCache = manager.informer<Delegation>({ path: delegationsPath(config.aclNamespace) });
  const agentCache = manager.informer<Agent>({ path: agentsPath(config.aclNamespace) });
  agentCache.addIndex(BY_AGENT_ID, (agent) => [agent.spec.agentId]);
  delegationCache.addIndex(BY_AGENT_ID, (delegation) => [delegation.spec.agentId]);
  const ownerOf = (agentId: string) => agentCache.byIndex(BY_AGENT_ID, agentId)[0]?.spec.ownerId;
  return {
    grants,
    items,
    namespaces,
    world: new ClusterWorld({ grants, items, namespaces, registry, aclNamespace: config.aclNamespace }),
    membershipCache,
    memberships: new ProjectedWorld(membershipCache, membershipKind),
    delegationCache,
    agentCache,
    delegations: new ProjectedWorld(delegationCache, delegationKind({ registry, ownerOf })),
    accessRequests: manager.informer<AccessRequest>({ path: accessRequestsPath(config.aclNamespace) }),
  };
}
